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


# Hits asked beyond k, so that the ones tied with the k-th are usually in the first answer.
TIE_MARGIN = 16


def top_k_stable(hits: Sequence[Hit], k: int) -> list[Hit]:
    """The best ``k`` hits, equal scores in utterance-id order.

    An engine returns equal scores in the order of its internal document addresses, which depend on
    how the index happened to be built (writer threads, segment merges): the same data would give
    other pools on another build. Ordering ties by utterance id makes the top k a function of the
    index content alone."""
    return sorted(hits, key=lambda hit: (-hit.score, hit.utterance_id))[:k]


def tie_may_continue(hits: Sequence[Hit], *, k: int, limit: int) -> bool:
    """Whether hits fetched best first with ``limit`` may have left out one tied with the k-th: the
    answer is full and its last score equals the k-th's (ask again with a larger limit)."""
    return len(hits) >= limit and len(hits) >= k > 0 and hits[-1].score >= hits[k - 1].score


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
        """Top-``k`` hits for each query, best first (BM25 scores, higher is better); equal scores in
        utterance-id order, whatever the index's internal layout (:func:`top_k_stable`)."""

    @abstractmethod
    def exists(self) -> bool:
        """Whether this index version has been built (and not deleted)."""

    @abstractmethod
    def delete(self) -> None:
        """Remove this index version; a no-op when it does not exist."""

    def describe(self) -> str:
        """Recorded on every candidate as its retriever version."""
        return f"{self.kind}:{self.index_name}"
