"""The annotation app's job kinds and their typed parameters (core.job_registry).

Admin forms, management commands and services build these; the handlers in
services/job_handlers.py unpack them. A field's default is that parameter's one default.
"""

from dataclasses import dataclass
from typing import ClassVar

from core.job_registry import JobParams


@dataclass(frozen=True, kw_only=True)
class ImportDialoguesParams(JobParams):
    kind: ClassVar[str] = "import_dialogues"
    label: ClassVar[str] = "import dialogues"

    path: str
    format: str
    dataset: str
    context_turns: int = 3
    encoding: str = "utf-8"


@dataclass(frozen=True, kw_only=True)
class ImportTestsetParams(JobParams):
    """A released test set's TSV (and its human_scores.jsonl) imported as a dataset."""

    kind: ClassVar[str] = "import_testset"
    label: ClassVar[str] = "import released test set"

    path: str
    dataset: str
    scores_path: str | None = None
    context_turns: int = 3
    encoding: str = "utf-8"


@dataclass(frozen=True, kw_only=True)
class ImportHFTestsetParams(JobParams):
    """A test set folder in the Hugging Face layout (export_testset --format hf) imported as a
    dataset and a frozen test set."""

    kind: ClassVar[str] = "import_testset_hf"
    label: ClassVar[str] = "import test set folder (Hugging Face layout)"

    path: str
    dataset: str | None = None  # None: the test set's name
    name: str | None = None  # None: the name in the folder's manifest.json, else the folder's name


@dataclass(frozen=True, kw_only=True)
class ImportScoresParams(JobParams):
    kind: ClassVar[str] = "import_scores"
    label: ClassVar[str] = "import scores"

    path: str
    encoding: str = "utf-8"


@dataclass(frozen=True, kw_only=True)
class BuildTestsetParams(JobParams):
    kind: ClassVar[str] = "build_testset"
    label: ClassVar[str] = "build test set"

    dataset: str
    name: str
    false_per_question: int = 3
    seed: int = 0
    rules_version: int | None = None  # None: the newest filter rules


@dataclass(frozen=True, kw_only=True)
class QualityRefreshParams(JobParams):
    kind: ClassVar[str] = "quality_refresh"
    label: ClassVar[str] = "refresh quality and agreement"

    dataset_id: int
