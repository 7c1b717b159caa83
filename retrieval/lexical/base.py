"""The interface every lexical (BM25) backend implements: build a versioned index of a
repository's utterances, then answer batches of queries with utterance ids and scores.

Queries are ground-truth responses (Sato et al. retrieve candidates related to the ground
truth, not to the context); stop words are removed by the analyzer so that content words
drive the match.
"""

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Hit:
    utterance_id: int
    score: float


class LexicalBackend(ABC):
    """One index version of one repository.

    ``index_name`` is unique per repository and version (e.g. ``wellchosen-subtitles-v3``);
    building never touches another version, so a running pool job keeps reading the index
    it started with while a new one is built.
    """

    kind: str = ""

    def __init__(self, *, index_name: str) -> None:
        self.index_name = index_name

    @abstractmethod
    def build(self, utterances: Iterable[tuple[int, str]], *, on_progress: Callable[[int], None] | None = None) -> int:
        """Index (utterance id, text) pairs into a new, empty index; return how many were indexed.

        ``on_progress(n)`` is called with the running count now and then.
        """

    @abstractmethod
    def search(self, queries: Sequence[str], *, k: int) -> list[list[Hit]]:
        """Top-``k`` hits for each query, best first (BM25 scores, higher is better)."""

    @abstractmethod
    def exists(self) -> bool:
        """Whether this index version has been built (and not deleted)."""

    @abstractmethod
    def delete(self) -> None:
        """Remove this index version; a no-op when it does not exist."""

    def describe(self) -> str:
        """Recorded on every candidate as its retriever version."""
        return f"{self.kind}:{self.index_name}"
