"""Exact inner-product top-k over an embedding store by float32 GEMM, block by block.

A FAISS scalar-quantizer scan decodes every stored vector once per query; a matrix product
decodes a block of the store once per call and multiplies it by every query of the batch, so a
batch of 128 queries reads and decodes the store once instead of 128 times.

Determinism: BLAS sums a dot product in an order that depends on where the query sits in the
matrix and on the threads (OpenBLAS gives a query different last bits alone and in a batch, even
with fixed shapes). The GEMM scores therefore only choose candidates: every row whose GEMM score
is within ``margin`` of the ``limit``-th best GEMM score is kept. A float32 dot product is off the
true one by at most δ = ``dim × 2⁻²⁴ × |q| × |x|``; the GEMM and the re-score below differ by at
most 2δ, so a row of the re-score's top ``limit`` lies at most 4δ below the GEMM's ``limit``-th
best: ``margin`` is 4δ (with |x| ≤ 1.1), and the rows kept always include the answer whatever the
GEMM's last bits (about 0.2 rows per query beyond ``limit`` on 1 M real sentence vectors).
They are then re-scored one pair at a time (the same sum for a pair whatever the batch), and the
best ``limit`` by that score, then by row, are the answer: a query's scores and rows are the same
bits whatever shares its batch, the batch size and the number of BLAS threads
(tests/retrieval/test_dense_exact_gemm.py checks it).

Memory beyond the store's page cache: one decoded block (``BLOCK × dim`` float32: 24 MiB at 384
dimensions), one block of scores (``GROUP × BLOCK`` float32: 8 MiB) and the candidates kept
(about ``limit`` per query).
"""

import numpy as np

from .store import EmbeddingStore, decode

GROUP = 128  # queries per product (a pool batch)
BLOCK = 16384  # store rows per product
_MAX_NORM = 1.1  # stored vectors are L2-normalised; float16 / int8 rounding leaves them under this


def exact_top(store: EmbeddingStore, queries: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, store rows), each ``len(queries) x limit``, best first (equal scores by row); row
    -1 and score -inf where the store has fewer than ``limit`` rows."""
    queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, store.meta.dim)
    n, dim = len(queries), store.meta.dim
    margins = 4 * dim * 2.0**-24 * _MAX_NORM * np.linalg.norm(queries, axis=1)
    tops = [_Candidates(limit, margins[first : first + GROUP]) for first in range(0, n, GROUP)]
    for start in range(0, store.meta.count, BLOCK):
        block = decode(np.asarray(store.vectors[start : start + BLOCK]), store.meta.dtype)
        for number, top in enumerate(tops):
            top.add(queries[number * GROUP : (number + 1) * GROUP] @ block.T, start)
    scores = np.full((n, limit), -np.inf, dtype=np.float32)
    rows = np.full((n, limit), -1, dtype=np.int64)
    for number, top in enumerate(tops):
        first = number * GROUP
        which, rank, best_scores, best_rows = top.best(store, queries[first : first + GROUP])
        scores[first + which, rank] = best_scores
        rows[first + which, rank] = best_rows
    return scores, rows


class _Candidates:
    """For each query of one group, the rows whose GEMM score is within its margin of the
    ``limit``-th best GEMM score seen so far (or all rows seen, while fewer than ``limit``)."""

    def __init__(self, limit: int, margins: np.ndarray) -> None:
        self.limit, self.margins, self.size = limit, margins, len(margins)
        self.floor = np.full(self.size, -np.inf, dtype=np.float64)
        self.query = np.empty(0, dtype=np.int64)
        self.score = np.empty(0, dtype=np.float32)
        self.row = np.empty(0, dtype=np.int64)

    def add(self, scores: np.ndarray, first_row: int) -> None:
        floor = self.floor
        if np.isneginf(floor).any() and scores.shape[1] >= self.limit:
            # The block's own limit-th best bounds the final one from below.
            kth = np.partition(scores, scores.shape[1] - self.limit, axis=1)[:, scores.shape[1] - self.limit]
            floor = np.maximum(floor, kth - self.margins)
        query, column = np.nonzero(scores >= floor[:, None])
        if not len(query):
            return
        self._merge(query, scores[query, column], column.astype(np.int64) + first_row)

    def _merge(self, query: np.ndarray, score: np.ndarray, row: np.ndarray) -> None:
        query = np.concatenate([self.query, query])
        score = np.concatenate([self.score, score])
        row = np.concatenate([self.row, row])
        rank, order = _ranks(query, score, row, self.size)
        query, score, row = query[order], score[order], row[order]
        at_limit = rank == self.limit - 1
        self.floor[query[at_limit]] = score[at_limit] - self.margins[query[at_limit]]
        keep = (rank < self.limit) | (score >= self.floor[query])
        self.query, self.score, self.row = query[keep], score[keep], row[keep]

    def best(self, store: EmbeddingStore, queries: np.ndarray):
        """(query, rank, score, row) of the best ``limit`` candidates of each query by their score
        re-computed one pair at a time, then by row."""
        wanted, inverse = np.unique(self.row, return_inverse=True)  # sorted: sequential reads
        vectors = decode(np.asarray(store.vectors[wanted]), store.meta.dtype)
        exact = np.einsum("ij,ij->i", vectors[inverse], queries[self.query], optimize=False)
        rank, order = _ranks(self.query, exact, self.row, self.size)
        keep = rank < self.limit
        return self.query[order][keep], rank[keep], exact[order][keep], self.row[order][keep]


def _ranks(query: np.ndarray, score: np.ndarray, row: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The order by query, score descending, row; and each entry's rank within its query in it."""
    order = np.lexsort((row, -score, query))
    counts = np.bincount(query, minlength=size)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return np.arange(len(order)) - starts[query[order]], order
