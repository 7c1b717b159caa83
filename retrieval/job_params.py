"""The retrieval app's job kinds and their typed parameters (core.job_registry)."""

from dataclasses import dataclass, field
from typing import ClassVar

from core.job_registry import JobParams

INDEX_KINDS = ["lexical", "dense"]


@dataclass(frozen=True, kw_only=True)
class ImportRepositoryParams(JobParams):
    kind: ClassVar[str] = "import_repository"
    label: ClassVar[str] = "import utterance repository"

    path: str
    name: str
    format: str = "lines"
    min_tokens: int = 1
    exclude_datasets: list[str] = field(default_factory=list)
    encoding: str = "utf-8"


@dataclass(frozen=True, kw_only=True)
class BuildIndexesParams(JobParams):
    kind: ClassVar[str] = "build_indexes"
    label: ClassVar[str] = "build search indexes"
    queue: ClassVar[str] = "gpu"  # encoding a repository wants a GPU

    repository: str
    kinds: list[str] = field(default_factory=lambda: list(INDEX_KINDS))


@dataclass(frozen=True, kw_only=True)
class BuildPoolsParams(JobParams):
    kind: ClassVar[str] = "build_pools"
    label: ClassVar[str] = "build candidate pools"
    queue: ClassVar[str] = "gpu"  # encodes ground truths (and builds missing indexes)

    dataset: str
    repository: str
    lexical: int = 5  # candidates from BM25 per question
    dense: int = 5  # candidates from embeddings per question
    min_tokens: int = 3
    paraphrase_threshold: float = 0.95  # cosine to the ground truth at or above which a text is a paraphrase
    exclude_datasets: list[str] = field(default_factory=list)
