"""The interface every dense search backend implements, and the search loop they share.

A backend (an exact FAISS index, HNSW, IVF-PQ, an Elasticsearch kNN index) proposes candidate
rows of the embedding store for a batch of query vectors, best first by its own score. The loop
here turns candidates into the answer every backend gives alike:

- approximate backends whose scores are approximate (PQ codes, Elasticsearch's quantised
  vectors) fetch ``k × rerank`` candidates and re-score them exactly from the store's vectors, so
  that scores are cosines of the stored vectors whatever the backend;
- equal scores come in utterance-id order: an engine returns ties in whatever order its heap or
  its segments left them, which would make pools depend on how the index happened to be built;
- when the last candidate fetched ties (by the backend's own score) with one kept, a hit tied
  with it may have been left out: that query is asked again with twice as many candidates.
"""

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from .store import EmbeddingStore, decode

# Candidates asked beyond k, so that the ones tied with the k-th are usually in the first answer.
TIE_MARGIN = 16
_NO_ID = np.iinfo(np.int64).max
_RESCORE_QUERIES = 32  # queries re-scored at a time: 32 x candidates x dim floats in memory


class DenseIndex(ABC):
    """One dense index version over one embedding store (row i of the store = candidate row i)."""

    kind: ClassVar[str] = ""
    rescore: ClassVar[bool] = False  # the engine's scores are approximate: re-score from the store
    max_candidates: ClassVar[int] = 1 << 62  # the most candidates the engine gives for one query

    def __init__(self, store: EmbeddingStore, *, rerank: int = 1) -> None:
        """``rerank``: where the engine's scores are approximate, re-score ``k × rerank`` candidates
        exactly from the store; 0 keeps the engine's scores (and its order)."""
        self.store = store
        self.rerank = max(0, int(rerank))

    @abstractmethod
    def candidates(self, queries: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, store rows), each ``len(queries) x limit``: up to ``limit`` candidates per query,
        best first by the engine's own score; row -1 (and any score) where there are fewer."""

    def describe(self) -> str:
        return self.kind

    def cosine(self, engine_scores: np.ndarray) -> np.ndarray:
        """The engine's scores as cosine similarities (for engines whose scores are not)."""
        return engine_scores.astype(np.float32)

    @property
    def ntotal(self) -> int:
        return self.store.meta.count

    def vectors_for(self, utterance_ids) -> np.ndarray:
        """float32 vectors of the utterances (zeros for unknown ids), from the store."""
        return self.store.vectors_for(utterance_ids)

    def search(self, queries: np.ndarray, *, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(cosine scores, utterance ids) of the top-``k`` utterances for each query, best first;
        equal scores in utterance-id order; id -1 and score -inf where fewer exist."""
        queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.store.meta.dim)
        scores = np.full((len(queries), max(k, 0)), -np.inf, dtype=np.float32)
        ids = np.full((len(queries), max(k, 0)), -1, dtype=np.int64)
        if not len(queries) or k <= 0 or not self.ntotal:
            return scores, ids
        pending = np.arange(len(queries))
        rescore = self.rescore and self.rerank > 0
        limit = min(max(k * self.rerank if rescore else k, k + TIE_MARGIN), self.max_candidates)
        while len(pending):
            engine, rows = self.candidates(queries[pending], limit)
            final = self._rescored(queries[pending], rows) if rescore else self.cosine(engine)
            found = np.where(rows >= 0, np.asarray(self.store.ids)[np.maximum(rows, 0)], -1)
            missing = rows < 0
            order = np.lexsort((np.where(missing, _NO_ID, found), np.where(missing, np.inf, -final)))[:, :k]
            kept_rows = np.take_along_axis(rows, order, axis=1)
            scores[pending, : order.shape[1]] = np.where(
                kept_rows >= 0, np.take_along_axis(final, order, axis=1), -np.inf
            )
            ids[pending, : order.shape[1]] = np.take_along_axis(found, order, axis=1)
            # A candidate beyond the last one fetched may tie (by the engine's score) with one kept.
            kept_engine = np.where(kept_rows >= 0, np.take_along_axis(engine, order, axis=1), np.inf)
            full = rows[:, -1] >= 0
            pending = pending[full & (engine[:, -1] >= kept_engine.min(axis=1))]
            if limit >= min(self.ntotal, self.max_candidates):
                break
            limit = min(limit * 2, self.max_candidates)
        return scores, ids

    def _rescored(self, queries: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Cosine of each query with each candidate's stored vector (-inf for padding rows)."""
        out = np.full(rows.shape, -np.inf, dtype=np.float32)
        for start in range(0, len(rows), _RESCORE_QUERIES):
            block = rows[start : start + _RESCORE_QUERIES]
            valid = block >= 0
            wanted, inverse = np.unique(block[valid], return_inverse=True)  # sorted: sequential reads
            vectors = decode(np.asarray(self.store.vectors[wanted]), self.store.meta.dtype)
            which = np.nonzero(valid)
            picked = vectors[inverse]
            out[start + which[0], which[1]] = np.einsum("ij,ij->i", picked, queries[start + which[0]], optimize=False)
        return out
