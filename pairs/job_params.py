"""The pairs app's job kinds and their typed parameters (core.job_registry)."""

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, ClassVar

from django.urls import reverse

from core.job_registry import JobParams, NextStep
from core.readable import count
from pairs.edits import Criterion, PairType


@dataclass(frozen=True, kw_only=True)
class BuildPairsParams(JobParams):
    kind: ClassVar[str] = "build_pairs"
    label: ClassVar[str] = "build contrastive pairs"
    start_permission: ClassVar[str | None] = "annotation.change_dataset"

    dataset: str
    name: str  # the pair set, created on the first run and resumed by the next
    types: list[str] = field(default_factory=lambda: list(PairType.ALL))
    criteria: list[str] = field(default_factory=lambda: list(Criterion.ALL))
    per_question: int = 1  # pairs per question and type (and criterion, for content words)
    seed: int = 0
    repository: str = ""  # bigram model and noun vocabulary; empty: the only repository

    def summary(self, result: dict[str, Any]) -> str:
        text = (
            f"Built {count(result['pairs_added'])} contrastive pairs for set {result['set']} from "
            f"{count(result['questions'])} questions of dataset {result['dataset']}; the set holds "
            f"{count(result['pairs'])} pairs"
        )
        if result.get("failed"):
            text += f" ({count(result['failed'])} questions failed)"
        return f"{text}."

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return review_step(result["set"])


@dataclass(frozen=True, kw_only=True)
class ImportPairsParams(JobParams):
    kind: ClassVar[str] = "import_pairs"
    label: ClassVar[str] = "import contrastive pairs"
    start_permission: ClassVar[str | None] = "pairs.add_pairset"

    path: str
    name: str
    description: str = ""

    def summary(self, result: dict[str, Any]) -> str:
        return f"Imported {count(result['pairs'])} pairs into set {result['set']} from {PurePath(self.path).name}."

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return review_step(result["set"])


def review_step(name: str) -> NextStep:
    return NextStep(f"Review pair set {name}", reverse("pairs-review", args=[name]))
