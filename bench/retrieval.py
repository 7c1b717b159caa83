"""Benchmark: retrieval at subtitle-corpus scale.

On a repository of N (default 1,000,000) real utterances (DailyDialog train and the Cornell
sample from ../shared/data, repeated with a numbered variation) and 10,000 ground-truth
queries (DailyDialog test and validation utterances), prints: the BM25 index build time and
throughput, top-10 queries/s on one core, dense encoding sentences/s on this CPU, FAISS
search ms/query and peak memory; and, side by side in the same run on a 100k slice, the same
queries through rank_bm25 (what a user would otherwise pick) with the speed ratio.

    .venv/bin/python bench/retrieval.py [--utterances 1000000] [--queries 10000]
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from import_repository import PeakRSS, source_utterances  # noqa: E402


def dailydialog_utterances(path: Path) -> list[str]:
    texts = []
    for line in path.open(encoding="utf-8"):
        texts.extend(t.strip() for t in line.split("__eou__") if t.strip())
    return texts


def varied(texts: list[str], n: int) -> list[str]:
    return [texts[i % len(texts)] + (f" {i // len(texts)}" if i >= len(texts) else "") for i in range(n)]


def one_core():
    """Pin this process (and the threads it starts) to one core for a per-core figure."""

    class Pinned:
        def __enter__(self):
            self.before = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {min(self.before)})

        def __exit__(self, *exc):
            os.sched_setaffinity(0, self.before)

    return Pinned()


def row(label: str, value: str, target: str = "", memory: PeakRSS | None = None) -> None:
    peak = f"{memory.peak / 1e6:,.0f}" if memory else ""
    print(f"{label:<52}{value:>18}{target:>16}{peak:>14}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--utterances", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--slice", type=int, default=100_000, help="repository slice for the rank_bm25 comparison")
    parser.add_argument("--peer-queries", type=int, default=300, help="queries sent to rank_bm25 (it is slow)")
    parser.add_argument("--encode", type=int, default=20_000, help="utterances encoded to measure the encoder")
    parser.add_argument("--faiss-queries", type=int, default=1000)
    parser.add_argument(
        "--shared", type=Path, default=Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    args = parser.parse_args()
    if not (args.shared / "dailydialog").is_dir():
        sys.exit(f"real data not found at {args.shared} (set WELLCHOSEN_SHARED_DATA)")
    work = Path(tempfile.mkdtemp(prefix="wellchosen-bench-retrieval-"))
    os.environ.setdefault("WELLCHOSEN_DATA_DIR", str(work))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from rank_bm25 import BM25Okapi

    from retrieval.dense.encoder import get_encoder
    from retrieval.dense.search_index import faiss_index_build, faiss_index_open
    from retrieval.dense.store import EmbeddingStoreWriter
    from retrieval.lexical.tantivy_backend import TantivyBackend, english_analyzer

    base = source_utterances(args.shared)
    corpus = varied(base, args.utterances)
    queries = (
        dailydialog_utterances(args.shared / "dailydialog/test/dialogues_test.txt")
        + dailydialog_utterances(args.shared / "dailydialog/validation/dialogues_validation.txt")
    )[: args.queries]
    print(
        f"repository: {len(corpus):,} utterances from {len(base):,} real ones; {len(queries):,} queries; "
        f"{os.cpu_count()} CPU cores"
    )
    print(f"{'measure':<52}{'value':>18}{'target':>16}{'peak RSS MB':>14}")

    # --- BM25 with tantivy at full scale
    backend = TantivyBackend(index_name="bench-v1", root=work / "tantivy")
    with PeakRSS() as memory:
        start = time.perf_counter()
        backend.build(enumerate(corpus))
        build_s = time.perf_counter() - start
    row("tantivy: index build (all cores)", f"{build_s:.1f} s", "", memory)
    row("tantivy: indexing throughput", f"{len(corpus) / build_s:,.0f} utt/s", ">= 30,000")
    backend.search(queries[:100], k=10)  # warm the page cache
    with one_core(), PeakRSS() as memory:
        start = time.perf_counter()
        backend.search(queries, k=10)
        query_s = time.perf_counter() - start
    row("tantivy: top-10 queries on one core", f"{len(queries) / query_s:,.0f} q/s", ">= 1,000", memory)

    # --- the peer on a slice: rank_bm25 against tantivy, same analysis, same queries
    analyzer = english_analyzer()
    sliced = corpus[: args.slice]
    peer_queries = queries[: args.peer_queries]
    with PeakRSS() as memory:
        start = time.perf_counter()
        peer = BM25Okapi([analyzer.analyze(t) for t in sliced], k1=1.2, b=0.75)
        peer_build_s = time.perf_counter() - start
    small = TantivyBackend(index_name="bench-slice-v1", root=work / "tantivy")
    start = time.perf_counter()
    small.build(enumerate(sliced))
    ours_build_s = time.perf_counter() - start
    with one_core():
        start = time.perf_counter()
        peer_hits = [np.argsort(-peer.get_scores(analyzer.analyze(q)))[:10] for q in peer_queries]
        peer_q_s = time.perf_counter() - start
        start = time.perf_counter()
        ours_hits = small.search(peer_queries, k=10)
        ours_q_s = time.perf_counter() - start
    overlap = np.mean(
        [
            len({h.utterance_id for h in o} & set(p.tolist())) / max(1, min(10, len(o)))
            for o, p in zip(ours_hits, peer_hits, strict=True)
            if o
        ]
    )
    row(f"rank_bm25 on {len(sliced):,}: build", f"{peer_build_s:.1f} s", "", memory)
    row(f"tantivy on {len(sliced):,}: build", f"{ours_build_s:.1f} s")
    row(f"rank_bm25 on {len(sliced):,}: top-10 on one core", f"{len(peer_queries) / peer_q_s:,.1f} q/s")
    row(f"tantivy on {len(sliced):,}: top-10 on one core", f"{len(peer_queries) / ours_q_s:,.0f} q/s")
    row("speed ratio tantivy / rank_bm25 (queries)", f"{peer_q_s / ours_q_s:,.0f}x")
    row("top-10 overlap tantivy vs rank_bm25", f"{overlap:.2f}")

    # --- dense: encoder speed on a sample, FAISS at full scale
    sample = base[:: max(1, len(base) // args.encode)][: args.encode]
    encoder = get_encoder()
    encoder.encode(sample[:256])  # load / export once, outside the timing
    with PeakRSS() as memory:
        start = time.perf_counter()
        vectors = encoder.encode(sample)
        encode_s = time.perf_counter() - start
    row(
        f"encode {len(sample):,} utterances ({encoder.name})", f"{len(sample) / encode_s:,.0f} sent/s", ">= 500", memory
    )
    reference = get_encoder(backend="torch").encode(sample[:1000])
    row("cosine int8/ONNX vs float32 torch (mean, 1000)", f"{float((reference * vectors[:1000]).sum(1).mean()):.4f}")

    # Encoding a million utterances on this CPU takes most of an hour; the FAISS figures use
    # the sample's real vectors, repeated with a little noise, which costs a search the same.
    rng = np.random.default_rng(0)
    writer = EmbeddingStoreWriter(work / "store", count=len(corpus), dim=encoder.dim, dtype="float16", model="bench")
    for start_row in range(0, len(corpus), 50_000):
        n = min(50_000, len(corpus) - start_row)
        block = vectors[rng.integers(0, len(vectors), n)] + rng.normal(0, 0.02, (n, encoder.dim)).astype(np.float32)
        writer.append(np.arange(start_row, start_row + n), block / np.linalg.norm(block, axis=1, keepdims=True))
    store = writer.close()
    (work / "exact").mkdir()
    (work / "hnsw").mkdir()
    with PeakRSS() as memory:
        start = time.perf_counter()
        kind = faiss_index_build(store, folder=work / "exact", tier="exact")["factory"]
        faiss_build_s = time.perf_counter() - start
        index = faiss_index_open(store, work / "exact")
        query_vectors = encoder.encode(queries[: args.faiss_queries])
        start = time.perf_counter()
        index.search(query_vectors, k=10)
        faiss_s = time.perf_counter() - start
    row(f"FAISS {kind} (exact) build over {len(corpus):,}", f"{faiss_build_s:.1f} s", "", memory)
    row(f"FAISS {kind} top-10, batch of {len(query_vectors):,}", f"{faiss_s * 1000 / len(query_vectors):.2f} ms/q")
    _, exact_ids = index.search(query_vectors, k=10)
    with PeakRSS() as memory:
        start = time.perf_counter()
        kind = faiss_index_build(store, folder=work / "hnsw", tier="hnsw")["factory"]
        hnsw_build_s = time.perf_counter() - start
        hnsw = faiss_index_open(store, work / "hnsw")
        start = time.perf_counter()
        _, hnsw_ids = hnsw.search(query_vectors, k=10)
        hnsw_s = time.perf_counter() - start
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(hnsw_ids, exact_ids, strict=True)])
    row(f"FAISS {kind} build (above WELLCHOSEN_FAISS_EXACT_MAX)", f"{hnsw_build_s:.1f} s", "", memory)
    row(f"FAISS {kind} top-10, batch of {len(query_vectors):,}", f"{hnsw_s * 1000 / len(query_vectors):.2f} ms/q")
    row("FAISS HNSW recall@10 against exact", f"{recall:.3f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
