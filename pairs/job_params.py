"""The pairs app's job kinds and their typed parameters (core.job_registry)."""

from dataclasses import dataclass, field
from typing import ClassVar

from core.job_registry import JobParams
from pairs.edits import Criterion, PairType


@dataclass(frozen=True, kw_only=True)
class BuildPairsParams(JobParams):
    kind: ClassVar[str] = "build_pairs"
    label: ClassVar[str] = "build contrastive pairs"

    dataset: str
    name: str  # the pair set, created on the first run and resumed by the next
    types: list[str] = field(default_factory=lambda: list(PairType.ALL))
    criteria: list[str] = field(default_factory=lambda: list(Criterion.ALL))
    per_question: int = 1  # pairs per question and type (and criterion, for content words)
    seed: int = 0
    repository: str = ""  # bigram model and noun vocabulary; empty: the only repository


@dataclass(frozen=True, kw_only=True)
class ImportPairsParams(JobParams):
    kind: ClassVar[str] = "import_pairs"
    label: ClassVar[str] = "import contrastive pairs"

    path: str
    name: str
    description: str = ""
