"""The test-set app's job kinds and their typed parameters (core.job_registry): importing a released
test set (a TSV, or a Hugging Face folder) and building one.

Admin forms, management commands and services build these; the handlers in
services/job_handlers.py unpack them. A field's default is that parameter's one default.
"""

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, ClassVar

from django.urls import reverse

from annotation.job_params import DatasetNextStep
from annotation.rules import FALSE_PER_QUESTION
from core.job_registry import JobParams, NextStep, param
from core.readable import count
from testsets.shortcuts.balance import BalanceOptions

# One command imports both (import_testset): one argument for the path of either.
TESTSET_PATH_HELP = "the TSV file, or the test set's folder (written by export_testset --format hf) with --format hf"


@dataclass(frozen=True, kw_only=True)
class ImportTestsetParams(DatasetNextStep, JobParams):
    """A released test set's TSV (and its human_scores.jsonl) imported as a dataset."""

    kind: ClassVar[str] = "import_testset"
    label: ClassVar[str] = "import released test set"
    start_permission: ClassVar[str | None] = "annotation.add_dataset"

    path: str = param(help=TESTSET_PATH_HELP, path=True, form=False)
    dataset: str = param(help="name of the new dataset")
    scores_path: str | None = param(
        None, help="human_scores.jsonl aligned with the TSV", option="--scores", path=True, form=False
    )
    context_turns: int = param(3, help="turns of context before each ground truth (tsv)")
    encoding: str = param("utf-8", help="the TSV's text encoding", form=False)

    def summary(self, result: dict[str, Any]) -> str:
        return (
            f"Imported {count(result['questions'])} questions with {count(result['candidates'])} candidates "
            f"and {count(result['scores'])} scores into dataset {result['dataset']} from {PurePath(self.path).name}."
        )


@dataclass(frozen=True, kw_only=True)
class ImportHFTestsetParams(DatasetNextStep, JobParams):
    """A test set folder in the Hugging Face layout (export_testset --format hf) imported as a
    dataset and a frozen test set."""

    kind: ClassVar[str] = "import_testset_hf"
    label: ClassVar[str] = "import test set folder (Hugging Face layout)"
    start_permission: ClassVar[str | None] = "annotation.add_dataset"

    # Only the command imports a folder (a page takes one file).
    path: str = param(help=TESTSET_PATH_HELP, path=True, form=False)
    dataset: str | None = param(
        None, help="name of the new dataset (default: the test set's name; required for a TSV)", form=False
    )
    name: str | None = param(
        None, help="hf: the test set's name (default: the manifest's, else the folder's)", form=False
    )

    def summary(self, result: dict[str, Any]) -> str:
        return (
            f"Imported test set {result['testset']} into dataset {result['dataset']}: "
            f"{count(result['questions'])} questions ({count(result['derived_questions'])} derived), "
            f"{count(result['candidates'])} candidates, {count(result['scores'])} scores."
        )


@dataclass(frozen=True, kw_only=True)
class BuildTestsetParams(JobParams):
    kind: ClassVar[str] = "build_testset"
    label: ClassVar[str] = "build test set"
    start_permission: ClassVar[str | None] = "testsets.add_testset"

    dataset: str = param(help="the dataset whose questions it takes", form=False)
    name: str = param(help="name of the new, frozen test set (a slug)")
    false_per_question: int = param(
        FALSE_PER_QUESTION,
        help="false candidates per question",
        label="False candidates per question",
        option="--false",
    )
    seed: int = param(0, help="seed of the draw of false candidates")
    rules_version: int | None = param(
        None, help="filter rules version (default: newest)", option="--rules", form_name="rules"
    )
    shortcut_aware: bool = param(
        False,
        help="choose false candidates so that the ground truth does not stand out by length or by what a "
        "surface-feature classifier learns (after the filter rules, never instead of them)",
        label="Shortcut-aware choice of false candidates",
    )
    shortcut_rounds: int = param(3, help="adversarial filtering rounds of the shortcut-aware choice (0: no classifier)")
    drop_unbalanced: bool = param(
        False,
        help="with --shortcut-aware: leave out the questions whose ground truth could not be balanced "
        "(fewer questions, fewer cues)",
        label="Leave out questions that could not be balanced",
    )

    def balance(self) -> BalanceOptions | None:
        """The shortcut-aware choice's options, or None for the paper's random choice."""
        if not self.shortcut_aware:
            return None
        return BalanceOptions(rounds=self.shortcut_rounds, seed=self.seed, drop_unbalanced=self.drop_unbalanced)

    def summary(self, result: dict[str, Any]) -> str:
        text = (
            f"Built test set {result['name']} from dataset {self.dataset}: {count(result['questions'])} questions "
            f"({count(result['derived_questions'])} derived) with {count(result['candidates'])} candidates."
        )
        if "unbalanced" in result:
            text += f" Shortcut-aware choice: {count(result['unbalanced'])} questions could not be balanced"
            text += " (left out)." if self.drop_unbalanced else "."
        return text

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return NextStep(
            f"Open test set {result['name']}", reverse("admin:testsets_testset_change", args=[result["testset_id"]])
        )


@dataclass(frozen=True, kw_only=True)
class AuditShortcutsParams(JobParams):
    """The shortcut audit of a dataset's pools or of a test set (testsets.shortcuts)."""

    kind: ClassVar[str] = "audit_shortcuts"
    label: ClassVar[str] = "audit shortcuts (context-free baselines)"
    start_permission: ClassVar[str | None] = "testsets.add_shortcutaudit"

    dataset: str | None = param(
        None, help="the dataset whose pools it audits (all candidates of each question)", form=False
    )
    testset: str | None = param(None, help="the test set it audits (its chosen candidates)", form=False)
    system: str | None = param(
        None,
        help="a registered system that scores the candidates with an empty context (the candidate-only "
        "language-model baseline; none: that baseline is left out)",
    )
    folds: int = param(5, help="folds of the surface-feature classifier's cross-validation over questions")
    seed: int = param(0, help="seed of the split of questions into folds")

    def summary(self, result: dict[str, Any]) -> str:
        flagged = result["above_chance"]
        verdict = f"above chance: {', '.join(flagged)}" if flagged else "no baseline above chance (95 % interval)"
        return (
            f"Audited {result['source']} ({count(result['questions'])} questions, chance "
            f"{result['chance']:.3f}): {verdict}."
        )

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        """The test set's page, or the dataset's workspace: where the newest audit is shown."""
        if result.get("testset_id"):
            return NextStep("Open the test set", reverse("admin:testsets_testset_change", args=[result["testset_id"]]))
        return NextStep(f"Open dataset {result['dataset']}", reverse("dashboard-dataset", args=[result["dataset"]]))
