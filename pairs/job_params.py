"""The pairs app's job kinds and their typed parameters (core.job_registry)."""

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, ClassVar

from django.urls import reverse

from core.job_registry import JobParams, NextStep, param
from core.readable import count
from pairs.edits import Criterion, PairType


@dataclass(frozen=True, kw_only=True)
class BuildPairsParams(JobParams):
    kind: ClassVar[str] = "build_pairs"
    label: ClassVar[str] = "build contrastive pairs"
    start_permission: ClassVar[str | None] = "annotation.change_dataset"

    dataset: str = param(help="the dataset whose ground truths are edited", form=False)
    name: str = param(help="the pair set; run again with the same name to resume a build")
    types: list[str] = param(
        default_factory=lambda: list(PairType.ALL),
        help="the minimal edits that make the incorrect responses",
        choices=[
            (PairType.CONTENT, "substituted content word (a noun, by a bigram model of the repository)"),
            (PairType.SENTENCE, "switched sentence type (declarative/interrogative, affirmative/negative)"),
            (PairType.FUNCTION, "substituted function word (a preposition or particle)"),
        ],
        separator=",",
    )
    criteria: list[str] = param(
        default_factory=lambda: list(Criterion.ALL),
        help="how a substituted content word is chosen (substituted content words only)",
        choices=[
            (Criterion.EQUALLY_LIKELY, "equally likely (EL): the replacement fits the neighbours as well as the word"),
            (Criterion.MOST_LIKELY, "most likely (ML): the noun the neighbours make most likely"),
        ],
        option="--criterion",
        separator=",",
    )
    per_question: int = param(1, help="pairs per question and type (and criterion, for content words)")
    seed: int = param(0, help="seed of the choice of words to edit")
    repository: str = param(
        "",
        help="the repository the bigram model and the noun vocabulary come from (substituted content words); "
        "empty: the only repository",
    )

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

    path: str = param(help="the JSON-lines file", option="file", path=True, form=False)
    name: str = param(help="the new pair set's name", option="--set")
    description: str = param("", help="what the pair set holds")

    def summary(self, result: dict[str, Any]) -> str:
        return f"Imported {count(result['pairs'])} pairs into set {result['set']} from {PurePath(self.path).name}."

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return review_step(result["set"])


def review_step(name: str) -> NextStep:
    return NextStep(f"Review pair set {name}", reverse("pairs-review", args=[name]))
