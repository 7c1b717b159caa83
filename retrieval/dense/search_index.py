"""FAISS over an embedding store: exact inner product up to a size, HNSW above it.

Vectors are L2-normalised, so inner product is cosine similarity. Both index types keep
vectors as float16 (scalar quantizer), half the memory of float32 at no loss that matters
for ranking.
"""

from pathlib import Path

import faiss
import numpy as np

from .store import EmbeddingStore

EXACT = "SQfp16"
APPROXIMATE = "HNSW32,SQfp16"
# Hits asked beyond k, so that the ones tied with the k-th are usually in the first answer.
TIE_MARGIN = 16


def faiss_index_build(store: EmbeddingStore, *, exact_max: int, path: Path) -> str:
    """Build the index for the store's rows (row i of the store = id i of the index); return its type."""
    kind = EXACT if store.meta.count <= exact_max else APPROXIMATE
    index = faiss.index_factory(store.meta.dim, kind, faiss.METRIC_INNER_PRODUCT)
    if not index.is_trained:
        index.train(np.zeros((1, store.meta.dim), dtype=np.float32))  # fp16 SQ needs no real training
    for chunk in store.chunks():
        index.add(chunk)
    faiss.write_index(index, str(path))
    return kind


class DenseIndex:
    def __init__(self, store: EmbeddingStore, index_path: Path, *, ef_search: int = 128) -> None:
        self.store = store
        self.index = faiss.read_index(str(index_path))
        if "HNSW" in type(self.index).__name__:
            self.index.hnsw.efSearch = ef_search

    def search(self, queries: np.ndarray, *, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(cosine scores, utterance ids) of the top-``k`` rows for each query; id -1 where fewer exist.

        Equal scores come in utterance-id order (FAISS returns them in whatever order its heap left
        them), so that the same store gives the same hits on every run."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        limit = k + TIE_MARGIN
        while True:
            scores, rows = self.index.search(queries, limit)
            ids = np.where(rows >= 0, np.asarray(self.store.ids)[np.maximum(rows, 0)], -1)
            full = (rows[:, -1] >= 0) & (scores[:, -1] >= scores[:, min(k, limit) - 1])
            if not full.any() or limit >= self.index.ntotal:
                break
            limit *= 2
        missing = ids < 0
        order = np.lexsort((np.where(missing, np.iinfo(np.int64).max, ids), np.where(missing, np.inf, -scores)))
        return np.take_along_axis(scores, order, axis=1)[:, :k], np.take_along_axis(ids, order, axis=1)[:, :k]
