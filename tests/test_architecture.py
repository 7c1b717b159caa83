"""The layers of the project and its import graph, checked by running the tools on the code."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["core", "annotation", "testsets", "crowd", "retrieval", "negatives", "pairs", "evaluation"]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, env={"PYTHONPATH": str(root)}
    )


@pytest.fixture
def project_copy(tmp_path) -> Path:
    """The project's packages and its import-linter configuration, in a folder of their own."""
    for package in PACKAGES:
        shutil.copytree(PROJECT_ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT_ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def test_the_layer_contract_holds(project_copy):
    result = lint_imports(project_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "upward"),
    [
        ("core/text.py", "from annotation.models import Dataset"),
        ("annotation/selectors.py", "from retrieval.models import RetrievalIndex"),
        ("retrieval/selectors.py", "from evaluation.models import System"),
        ("annotation/selectors.py", "from crowd.models import CrowdBatch"),
        # crowd and retrieval share a layer: neither imports the other
        ("crowd/models.py", "from retrieval.models import RetrievalIndex"),
        ("retrieval/selectors.py", "from crowd.models import CrowdBatch"),
        # test sets sit above annotation, beside crowd and retrieval
        ("annotation/selectors.py", "from testsets.models import TestSet"),
        ("crowd/selectors.py", "from testsets.selectors import dataset_testsets"),
    ],
)
def test_an_upward_import_inside_a_function_breaks_the_contract(project_copy, module, upward):
    # given one import from a higher layer, hidden inside a function
    with open(project_copy / module, "a") as handle:
        handle.write(f"\n\ndef _upward():\n    {upward}  # noqa: F401\n")
    # when the contract is checked, then it fails and names the import
    result = lint_imports(project_copy)
    importer = module.removesuffix(".py").replace("/", ".")
    imported = upward.split()[1]
    assert result.returncode == 1
    assert "1 broken" in result.stdout and f"{importer} -> {imported}" in result.stdout


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return cycles


def test_the_import_graph_has_no_cycle():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert len(graph.modules) > 150  # the whole project was read
    assert import_cycles(graph) == []


def test_the_cycle_check_finds_a_cycle(project_copy, monkeypatch):
    # given two modules of one package that import each other (one of them inside a function)
    (project_copy / "core" / "cycle_a.py").write_text("from core import cycle_b  # noqa: F401\n")
    (project_copy / "core" / "cycle_b.py").write_text("def f():\n    from core import cycle_a  # noqa: F401\n")
    monkeypatch.syspath_prepend(str(project_copy))
    for name in [m for m in sys.modules if m == "core" or m.startswith("core.")]:
        monkeypatch.delitem(sys.modules, name)
    # when the graph of that copy is built, then the cycle is found
    graph = grimp.build_graph("core", cache_dir=None)
    assert ["core.cycle_a", "core.cycle_b"] in import_cycles(graph)


# A branch on one crowd provider: an equality test on a ``provider`` attribute (batch.provider
# compared with "mturk") or a CrowdProvider member (CrowdProvider.MTURK). What differs between the
# providers is theirs (crowd/providers/); everyone else asks the batch's provider.
PROVIDER_BRANCH = re.compile(r"\bprovider\s*[!=]=|\bCrowdProvider\.[A-Z][A-Z_]*\b")


def provider_branches(root: Path) -> list[str]:
    """Every line of the project's code outside crowd/providers/ that branches on one provider. The
    tests are not read: they assert stored values (an annotator's provider is "mturk"), no branch."""
    files = [path for top in (*PACKAGES, "config", "bench") for path in (root / top).rglob("*.py")]
    found = []
    for path in sorted([*files, *root.glob("*.py")]):
        relative = path.relative_to(root)
        if relative.parts[:2] == ("crowd", "providers"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if PROVIDER_BRANCH.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_code_outside_the_providers_branches_on_a_provider():
    assert provider_branches(PROJECT_ROOT) == []


@pytest.mark.parametrize(
    "branch",
    [
        "if batch.provider" + ' == "mturk":',  # (split so that a grep of the project finds no branch here)
        "if ca.provider" + " != CrowdProvider.LINK:",
        "elif worker.provider in (CrowdProvider.MTURK, CrowdProvider.PROLIFIC):",
    ],
)
def test_the_provider_branch_check_finds_a_branch(project_copy, branch):
    # given a view that branches on one provider
    with open(project_copy / "crowd" / "views.py", "a") as handle:
        handle.write(f"\n\ndef _branch(batch, ca, worker):\n    {branch}\n        pass\n")
    # when the code is read, then the line is found
    (found,) = provider_branches(project_copy)
    assert found.startswith("crowd/views.py:") and found.endswith(branch)


def test_the_providers_own_modules_may_compare_providers(project_copy):
    # given a comparison in a provider's own module
    with open(project_copy / "crowd" / "providers" / "link.py", "a") as handle:
        handle.write("\n\ndef _own(batch):\n    return batch.provider" + ' == "link"\n')
    # when the code is read, then nothing is found
    assert provider_branches(project_copy) == []


LAYER = {
    "core": 0,
    "annotation": 1,
    "testsets": 2,
    "crowd": 2,
    "retrieval": 2,
    "negatives": 2,
    "pairs": 2,
    "evaluation": 3,
}


def test_foreign_keys_between_apps_point_down_the_layers():
    from django.apps import apps

    upward = []
    for model in apps.get_models():
        source = model._meta.app_label
        if source not in LAYER:
            continue
        for field in model._meta.get_fields():
            if (field.many_to_one or field.one_to_one or field.many_to_many) and field.concrete:
                target = field.related_model._meta.app_label
                if target in LAYER and target != source and LAYER[target] >= LAYER[source]:
                    upward.append(f"{model.__name__}.{field.name} -> {target}")
    assert upward == []


def test_the_architecture_page_shows_the_current_data_model():
    from core.management.commands.data_model import data_model_mermaid

    page = (PROJECT_ROOT / "docs" / "architecture.md").read_text()
    shown = page.split("<!-- data-model:start -->\n", 1)[1].split("<!-- data-model:end -->", 1)[0]
    assert shown == f"```mermaid\n{data_model_mermaid()}```\n", "paste `manage.py data_model` into the page"
