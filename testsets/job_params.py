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
from core.job_registry import JobParams, NextStep
from core.readable import count


@dataclass(frozen=True, kw_only=True)
class ImportTestsetParams(DatasetNextStep, JobParams):
    """A released test set's TSV (and its human_scores.jsonl) imported as a dataset."""

    kind: ClassVar[str] = "import_testset"
    label: ClassVar[str] = "import released test set"
    start_permission: ClassVar[str | None] = "annotation.add_dataset"

    path: str
    dataset: str
    scores_path: str | None = None
    context_turns: int = 3
    encoding: str = "utf-8"

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

    path: str
    dataset: str | None = None  # None: the test set's name
    name: str | None = None  # None: the name in the folder's manifest.json, else the folder's name

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

    dataset: str
    name: str
    false_per_question: int = FALSE_PER_QUESTION
    seed: int = 0
    rules_version: int | None = None  # None: the newest filter rules

    def summary(self, result: dict[str, Any]) -> str:
        return (
            f"Built test set {result['name']} from dataset {self.dataset}: {count(result['questions'])} questions "
            f"({count(result['derived_questions'])} derived) with {count(result['candidates'])} candidates."
        )

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return NextStep(
            f"Open test set {result['name']}", reverse("admin:testsets_testset_change", args=[result["testset_id"]])
        )
