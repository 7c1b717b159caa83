"""Benchmark: the exact dense tier, FAISS ``SQfp16`` against a float32 GEMM over the float16
store in fixed-shape blocks (retrieval/dense/exact_gemm.py), side by side in one run.

One thread (OMP, OpenBLAS and MKL set to 1 before numpy loads), batches of 128 queries (as the
pool job sends them), top-``k``. The queries are the store's own rows 0..N-1 as they are (real
encoded texts), so each query's best hit is itself. Measured: ms per query for each, and their
agreement: the fraction of queries whose top-10 rows are the same list (and the same set), and
the largest difference between the scores at the same rank of the top-k.

    .venv/bin/python bench/dense_exact.py --store /tmp/pw1m/embeddings/repository-v1/store
        [--queries 500] [--batch 128] [--k 50] [--groups 32] [--blocks 16384]

``--groups`` / ``--blocks`` time the GEMM search with other fixed shapes too (the first of each
is compared for agreement).
"""

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import faiss  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from retrieval.dense import exact_gemm  # noqa: E402
from retrieval.dense.store import EmbeddingStore  # noqa: E402


def timed_batches(search, queries: np.ndarray, batch: int, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Search the queries in batches; (scores, rows, ms per query)."""
    scores, rows = [], []
    started = time.perf_counter()
    for start in range(0, len(queries), batch):
        s, r = search(queries[start : start + batch], k)
        scores.append(s)
        rows.append(r)
    elapsed = time.perf_counter() - started
    return np.concatenate(scores), np.concatenate(rows), 1000 * elapsed / len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--groups", type=int, nargs="+", default=[exact_gemm.GROUP])
    parser.add_argument("--blocks", type=int, nargs="+", default=[exact_gemm.BLOCK])
    args = parser.parse_args()
    faiss.omp_set_num_threads(1)
    store = EmbeddingStore(args.store)
    queries = store.between(0, args.queries)
    print(
        f"store: {store.meta.count:,} x {store.meta.dim} {store.meta.dtype}; {len(queries)} queries "
        f"(store rows 0..{len(queries) - 1}), batches of {args.batch}, top-{args.k}, one thread"
    )

    started = time.perf_counter()
    index = faiss.index_factory(store.meta.dim, "SQfp16", faiss.METRIC_INNER_PRODUCT)
    index.train(np.zeros((1, store.meta.dim), dtype=np.float32))
    for chunk in store.chunks():
        index.add(chunk)
    print(f"FAISS SQfp16 built in {time.perf_counter() - started:.1f} s")
    for _ in store.chunks():
        pass  # the store's pages in the page cache before the GEMM search reads them

    rows_out = [("FAISS SQfp16", *timed_batches(index.search, queries, args.batch, args.k))]
    for group in args.groups:
        for block in args.blocks:
            exact_gemm.GROUP, exact_gemm.BLOCK = group, block
            name = f"GEMM G={group} B={block}"
            rows_out.append(
                (name, *timed_batches(lambda q, k: exact_gemm.exact_top(store, q, k), queries, args.batch, args.k))
            )
    faiss_scores, faiss_rows = rows_out[0][1], rows_out[0][2]
    print(f"\n{'search':<24} {'ms/query':>9} {'top-10 same list':>17} {'same set':>9} {'max |score diff|':>17}")
    for name, scores, rows, ms in rows_out:
        same_list = (rows[:, :10] == faiss_rows[:, :10]).all(axis=1).mean()
        same_set = np.mean([set(a) == set(b) for a, b in zip(rows[:, :10], faiss_rows[:, :10], strict=True)])
        diff = float(np.abs(scores - faiss_scores).max())
        print(f"{name:<24} {ms:>9.2f} {same_list:>17.3f} {same_set:>9.3f} {diff:>17.2e}")
    self_hit = (rows_out[1][2][:, 0] == np.arange(len(queries))).mean()
    print(f"\n{rows_out[1][0]}: the query's own row first for {self_hit:.3f} of the queries (duplicates tie)")


if __name__ == "__main__":
    main()
