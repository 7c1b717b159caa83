"""The layers of the project and its import graph, checked by running the tools on the code."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["core", "annotation", "crowd", "retrieval", "evaluation"]
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
