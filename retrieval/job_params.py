"""The retrieval app's job kinds and their typed parameters (core.job_registry)."""

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, ClassVar

from django.urls import reverse
from django.utils.http import urlencode

from annotation.job_params import DatasetNextStep, normalised_text, normaliser_param, skipped_text
from core.job_registry import JobParams, NextStep, param
from core.readable import count

INDEX_KINDS = ["lexical", "dense"]
REPOSITORY_FORMATS = ("lines", "cornell", "dailydialog")  # retrieval.services.repository_import reads each


@dataclass(frozen=True, kw_only=True)
class ImportRepositoryParams(JobParams):
    kind: ClassVar[str] = "import_repository"
    label: ClassVar[str] = "import utterance repository"
    start_permission: ClassVar[str | None] = "annotation.add_repository"

    path: str = param(help="the utterances file (.gz too)", path=True, form=False)
    name: str = param(help="new repository, or an existing one to add to")
    format: str = param("lines", help="the file's format", choices=REPOSITORY_FORMATS)
    min_tokens: int = param(1, help="skip utterances with fewer words")
    exclude_datasets: list[str] = param(
        default_factory=list,
        help="leave out every utterance that occurs in these datasets",
        option="--exclude-dataset",
    )
    encoding: str = param("utf-8", help="the file's text encoding", form=False)
    normaliser: str = normaliser_param()

    def summary(self, result: dict[str, Any]) -> str:
        skipped = skipped_text(
            result,
            {
                "duplicates": "duplicates",
                "skipped_blank": "blank",
                "skipped_short": "too short",
                "skipped_too_long": "too long",
                "skipped_excluded": "in an excluded dataset",
                "skipped_unterminated_last_line": "cut off",
            },
        )
        return (
            f"Imported {count(result['inserted'])} utterances into repository {result['repository']} from "
            f"{PurePath(self.path).name} ({count(result['lines'])} lines"
            + (f"; left out: {skipped}" if skipped else "")
            + f"){normalised_text(result)}; it holds {count(result['repository_size'])} utterances."
        )

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return repository_step(result["repository"])


@dataclass(frozen=True, kw_only=True)
class BuildIndexesParams(JobParams):
    kind: ClassVar[str] = "build_indexes"
    label: ClassVar[str] = "build search indexes"
    start_permission: ClassVar[str | None] = "annotation.change_repository"
    queue: ClassVar[str] = "gpu"  # encoding a repository wants a GPU

    repository: str = param(help="the repository to index", form=False)  # the admin action's row
    kinds: list[str] = param(
        default_factory=lambda: list(INDEX_KINDS),
        help="build just this kind (default: both)",
        choices=INDEX_KINDS,
        option="--only",
        form=False,
    )

    def summary(self, result: dict[str, Any]) -> str:
        built = []
        if "lexical" in result:
            built.append(f"the lexical index ({count(result['lexical']['utterances'])} utterances)")
        if "dense" in result:
            built.append(
                f"the dense index ({count(result['dense']['utterances'])} utterances, {result['dense']['model']})"
            )
        return f"Built {' and '.join(built) or 'no index'} of repository {self.repository}."

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return repository_step(self.repository)


@dataclass(frozen=True, kw_only=True)
class BuildPoolsParams(DatasetNextStep, JobParams):
    kind: ClassVar[str] = "build_pools"
    label: ClassVar[str] = "build candidate pools"
    start_permission: ClassVar[str | None] = "annotation.change_dataset"
    queue: ClassVar[str] = "gpu"  # encodes ground truths (and builds missing indexes)

    dataset: str = param(help="the dataset whose questions get pools", form=False)
    repository: str = param(help="the repository the candidates are taken from")
    lexical: int = param(5, help="candidates from BM25 per question", label="BM25 candidates")
    dense: int = param(5, help="candidates from embeddings per question", label="Embedding candidates")
    min_tokens: int = param(3, help="skip shorter utterances")
    paraphrase_threshold: float = param(
        0.95, help="skip utterances at least this similar (cosine) to the ground truth: paraphrases"
    )
    exclude_datasets: list[str] = param(
        default_factory=list, help="never take an utterance that occurs in these datasets", option="--exclude"
    )
    match_surface: bool = param(
        False,
        help="prefer hits like the ground truth in length (within 1.5x) and tokenisation style, each group in "
        "rank order, so that the ground truth does not stand out from its false candidates",
        label="Match the ground truth's length and style",
    )

    def summary(self, result: dict[str, Any]) -> str:
        text = (
            f"Retrieved candidates for {count(result['built'])} questions of dataset {result['dataset']} from "
            f"repository {result['repository']}: {count(result['candidates_added'])} candidates added"
        )
        others = skipped_text(
            result, {"skipped_finished": "done before", "short_pools": "with a short pool", "failed": "failed"}
        )
        return f"{text}; questions {others}." if others else f"{text}."


def repository_step(name: str) -> NextStep:
    return NextStep(
        f"Open repository {name}", f"{reverse('admin:annotation_repository_changelist')}?{urlencode({'q': name})}"
    )
