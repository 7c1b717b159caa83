"""Scoring backends: every system kind has one, and only the backends branch on a system's kind."""

import ast
from pathlib import Path

import pytest

from config.apps import PROJECT_APPS
from core.errors import UserError
from evaluation.models import System, SystemKind
from evaluation.scoring.backends import BACKENDS, backend_for, backend_named
from evaluation.scoring.lm_kinds import LM_KINDS

ROOT = Path(__file__).resolve().parents[2]
KIND_VALUES = frozenset(SystemKind.values)
# where the kinds' differences live; models declare the kinds and their constraints
OWNERS = {"evaluation/scoring/backends.py", "evaluation/scoring/lm_kinds.py"}


def kind_branches(source: str) -> list[int]:
    """Lines of ``source`` that compare a system's kind with a kind: ``x.kind == "causal"``,
    ``kind in ("causal", "seq2seq")``, ``kind != SystemKind.PLUGIN``, ``isinstance(s, PluginScorer)``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_kind_member(o) for o in operands) or (
                any(_names_a_kind(o) for o in operands) and any(_is_kind_value(o) for o in operands)
            ):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            if any("Scorer" in ast.unparse(arg) or "Generator" in ast.unparse(arg) for arg in node.args[1:]):
                lines.append(node.lineno)
    return lines


def _is_kind_member(node) -> bool:
    return isinstance(node, ast.Attribute) and ast.unparse(node.value).endswith("SystemKind")


def _names_a_kind(node) -> bool:
    return (
        (isinstance(node, ast.Name) and node.id == "kind")
        or (isinstance(node, ast.Attribute) and node.attr == "kind")
        or (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "kind")
    )


def _is_kind_value(node) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in KIND_VALUES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_kind_value(e) for e in node.elts)
    return False


def test_every_system_kind_has_a_backend_and_every_backend_a_kind():
    assert set(BACKENDS) == KIND_VALUES
    assert all(backend.kind == kind for kind, backend in BACKENDS.items())


def test_every_language_model_kind_is_a_backend():
    assert set(LM_KINDS) <= set(BACKENDS)


@pytest.mark.parametrize(
    "source",
    [
        "if system.kind == 'causal': pass",
        "x = kind in ('causal', 'seq2seq')",
        "y = system.kind != SystemKind.PLUGIN",
        "z = isinstance(scorer, PluginScorer)",
        "w = [n for n, info in systems.items() if info['kind'] != 'external']",
    ],
)
def test_the_check_finds_a_branch_on_a_kind(source):
    assert kind_branches(source) == [1]


def test_the_check_lets_other_comparisons_through():
    assert kind_branches("a = job.kind == 'crowd_publish'\nb = config['question'] == 'external'") == []


def test_no_code_outside_the_backends_branches_on_a_system_kind():
    found = []
    for app in PROJECT_APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative in OWNERS or "/migrations/" in relative or "/models/" in relative:
                continue
            found += [f"{relative}:{line}" for line in kind_branches(path.read_text())]
    assert found == []


def test_a_kind_without_a_backend_is_a_clear_error():
    with pytest.raises(UserError, match="kind must be one of causal, seq2seq, plugin, external, not 'gguf'"):
        backend_named("gguf")
    with pytest.raises(UserError, match="no scoring backend for kind 'gguf'"):
        backend_for(System(name="s", kind="gguf"))


def test_an_option_of_another_kind_is_refused_by_the_backend():
    with pytest.raises(UserError, match="compiling applies to causal systems"):
        BACKENDS["seq2seq"].options_check(compile_model=True, chat_template=False)
    with pytest.raises(UserError, match="a chat template applies to causal systems, not to a plugin system"):
        BACKENDS["plugin"].options_check(compile_model=False, chat_template=True)
    BACKENDS["causal"].options_check(compile_model=True, chat_template=True)


def test_only_backends_that_score_are_asked_for_losses():
    assert [kind for kind, backend in BACKENDS.items() if not backend.scores] == ["external"]
    with pytest.raises(UserError, match="external .* cannot be scored"):
        BACKENDS["external"].scorer(System(name="zhao", kind="external"), device=None)


def test_a_plugin_says_itself_whether_its_losses_are_independent():
    class Joint:
        plugin = object()

    class Independent:
        plugin = type("P", (), {"losses_are_independent": True})()

    assert not BACKENDS["plugin"].losses_are_independent(Joint())
    assert BACKENDS["plugin"].losses_are_independent(Independent())
    assert BACKENDS["causal"].losses_are_independent(Joint())
