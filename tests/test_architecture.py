"""The layers of the project and its import graph, checked by running the tools on the code."""

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

from config.apps import APP_MODULE_LAYERS, PROJECT_APPS, PROJECT_LAYERS

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = list(PROJECT_APPS)
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
APP_LAYERS_CONTRACT = "Layers: " + " <- ".join(" | ".join(layer) for layer in PROJECT_LAYERS)
MODULE_LAYERS_CONTRACT = "Module layers of every app: " + " <- ".join(", ".join(layer) for layer in APP_MODULE_LAYERS)


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, env={"PYTHONPATH": str(root)}
    )


def lint_imports_with(root: Path, module: str, line: str) -> tuple[subprocess.CompletedProcess, str, str]:
    """``lint-imports`` on ``root`` once ``line`` (an import) is added to ``module`` inside a function;
    with the importing and the imported module's names, as its report writes them."""
    with open(root / module, "a") as handle:
        handle.write(f"\n\ndef _added():\n    {line}  # noqa: F401\n")
    return lint_imports(root), module.removesuffix(".py").replace("/", "."), line.split()[1]


@pytest.fixture
def project_copy(tmp_path) -> Path:
    """The project's packages and its import-linter configuration, in a folder of their own."""
    for package in PACKAGES:
        shutil.copytree(PROJECT_ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT_ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def pyproject() -> dict:
    with open(PROJECT_ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)


def contract(name: str) -> dict:
    (found,) = [c for c in pyproject()["tool"]["importlinter"]["contracts"] if c["name"] == name]
    return found


def test_pyprojects_app_lists_are_the_project_apps():
    # pyproject.toml cannot read config/apps.py: its copies of the list are checked here
    tool = pyproject()["tool"]
    assert tool["setuptools"]["packages"]["find"]["include"] == ["config*", *(f"{app}*" for app in PROJECT_APPS)]
    assert tool["ruff"]["lint"]["isort"]["known-first-party"] == ["config", *PROJECT_APPS, "tests"]
    assert tool["importlinter"]["root_packages"] == list(PROJECT_APPS)
    assert [c["name"] for c in tool["importlinter"]["contracts"]] == [APP_LAYERS_CONTRACT, MODULE_LAYERS_CONTRACT]
    assert contract(APP_LAYERS_CONTRACT)["layers"] == [" | ".join(layer) for layer in reversed(PROJECT_LAYERS)]


def app_module_layers(root: Path) -> list[list[str]]:
    """The second contract's layers, from the outside in: each APP_MODULE_LAYERS layer's modules in
    every app that has them."""
    layers = []
    for names in APP_MODULE_LAYERS:
        modules = []
        for app in PROJECT_APPS:
            for name in names:
                found = {path.stem for path in (root / app).glob(f"{name}.py")}
                found |= {path.parent.name for path in (root / app).glob(f"{name}/__init__.py")}
                modules += [f"{app}.{module}" for module in sorted(found)]
        layers.append(modules)
    return layers


def layers_toml(layers: list[list[str]]) -> str:
    """``layers`` as pyproject.toml writes them: one string per layer, one line per app."""
    lines = ["layers = ["]
    for modules in layers:
        by_app: dict[str, list[str]] = {}
        for module in modules:
            by_app.setdefault(module.split(".")[0], []).append(module)
        rows = [" : ".join(names) for names in by_app.values()]
        lines += ['    """\\', *(f"    {row} : \\" for row in rows[:-1]), f'    {rows[-1]}""",']
    return "\n".join([*lines, "]"])


def test_the_module_layers_contract_names_every_apps_layer_modules():
    listed = [[module.strip() for module in layer.split(":")] for layer in contract(MODULE_LAYERS_CONTRACT)["layers"]]
    expected = app_module_layers(PROJECT_ROOT)
    assert listed == expected, f"paste into pyproject.toml's second contract:\n{layers_toml(expected)}"


def test_the_layer_contracts_hold(project_copy):
    result = lint_imports(project_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


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
    # when the contract is checked, then it fails and names the import
    result, importer, imported = lint_imports_with(project_copy, module, upward)
    assert result.returncode == 1
    assert "1 broken" in result.stdout and f"{importer} -> {imported}" in result.stdout


@pytest.mark.parametrize(
    ("module", "inward"),
    [
        # a read that writes, in its own app and in another one
        ("crowd/selectors.py", "from crowd.services.batches import crowd_batch_create"),
        ("crowd/selectors.py", "from annotation.services.quality import quality_refresh"),
        # a model that reads through a selector, a service that reaches back to an entry point
        ("pairs/models.py", "from pairs.selectors import review_counts"),
        ("evaluation/services/evaluations.py", "from annotation.admin.dataset_tools import DatasetTool"),
        ("core/services/jobs.py", "from core.tasks import run_job"),
        ("annotation/selectors_dataset.py", "from core.management.commands.data_model import Command"),
    ],
)
def test_an_inward_import_inside_a_function_breaks_the_module_layers(project_copy, module, inward):
    # given one import of an outer layer's module, hidden inside a function
    # when the contracts are checked, then the second one fails and names the import
    result, importer, imported = lint_imports_with(project_copy, module, inward)
    assert result.returncode == 1 and "1 kept, 1 broken" in result.stdout
    broken = result.stdout.split("Broken contracts", 1)[1]
    assert "Module layers of every app" in broken and f"{importer} -> {imported}" in broken


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


LAYER = {app: number for number, layer in enumerate(PROJECT_LAYERS) for app in layer}


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
