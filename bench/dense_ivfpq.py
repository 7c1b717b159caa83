"""Benchmark: dense search tiers on real sentence embeddings (exact, HNSW, IVF-PQ with and without
re-ranking), extrapolated to 100 M and 441 M utterances.

Real utterances only: every distinct utterance of DailyDialog (train, validation, test) and of the
Cornell movie-lines sample in ../shared/data, encoded with the packaged all-MiniLM-L6-v2 (int8 ONNX
on this CPU, as the encoding job). 2,000 distinct DailyDialog test utterances, drawn with a fixed
seed, are the queries (encoded alone, as pools encode ground truths) and are left out of the index.
Vectors are cached under --cache between runs (encoding takes minutes on 2 busy cores).

Measured per tier: recall@10 against exact float32 search, bytes per vector (RAM and disk),
queries/s on this machine's cores (batches of 128 queries, as the pool job sends them) and build
time; IVF-PQ at several nprobe, without re-ranking (PQ scores) and re-ranking k x R candidates
from a float16 or an int8 store. Then the same extrapolated to 100 M and 441 M utterances, with
what each extrapolation assumes.

    .venv/bin/python bench/dense_ivfpq.py [--queries 2000] [--nprobe 8 16 32 64 128] [--rerank 0 4 8]
    .venv/bin/python bench/dense_ivfpq.py --store-errors
    .venv/bin/python bench/dense_ivfpq.py --vectors /tmp/pw1m/embeddings/repository-v1/store --nprobe 32 64 128

--vectors STORE: index the vectors of an existing embedding store instead (e.g. the 972,942
synthetic utterances of `bench/pools_workers.py --synthetic 1000000 --keep /tmp/pw1m`, real
sentences recombined: more than the real text at hand, and no noisy copies); the same queries. The
HNSW tier is left out there (minutes to build, not the tier at issue).
"""

import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def dailydialog(path: Path) -> list[str]:
    texts = []
    for line in path.open(encoding="utf-8"):
        texts.extend(t.strip() for t in line.split("__eou__") if t.strip())
    return texts


def cornell(folder: Path) -> list[str]:
    texts = []
    for path in sorted(folder.glob("movie_lines*.txt")):
        for line in path.open(encoding="utf-8", errors="replace"):
            fields = line.rstrip("\r\n").split(" +++$+++ ")
            if len(fields) == 5 and fields[4].strip():
                texts.append(fields[4].strip())
    return texts


def corpus(shared: Path, n_queries: int) -> tuple[list[str], list[str], dict[str, int]]:
    """(indexed texts, query texts, counts by source): every distinct utterance, the queries drawn
    from DailyDialog test utterances and left out of the indexed ones."""
    sources = {
        "dailydialog train": dailydialog(shared / "dailydialog/train/dialogues_train.txt"),
        "dailydialog validation": dailydialog(shared / "dailydialog/validation/dialogues_validation.txt"),
        "dailydialog test": dailydialog(shared / "dailydialog/test/dialogues_test.txt"),
        "cornell sample": cornell(shared / "cornell_PARTIAL"),
    }
    seen: dict[str, None] = {}
    for texts in sources.values():
        seen.update(dict.fromkeys(texts))
    distinct = list(seen)
    test = sorted(set(sources["dailydialog test"]))
    rng = np.random.default_rng(20261127)
    queries = [test[i] for i in sorted(rng.choice(len(test), size=n_queries, replace=False))]
    held_out = set(queries)
    indexed = [t for t in distinct if t not in held_out]
    counts = {name: len(texts) for name, texts in sources.items()}
    counts["distinct"] = len(distinct)
    return indexed, queries, counts


def encoded(texts: list[str], cache: Path, *, alone: bool) -> np.ndarray:
    """float32 vectors of the texts, from the cache when it holds them."""
    from retrieval.dense.encoder import get_encoder

    encoder = get_encoder()
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = cache / f"{encoder.name}-{'alone' if alone else 'batched'}-{len(texts)}-{digest}.npy"
    if path.exists():
        return np.load(path)
    started = time.perf_counter()
    if alone:
        vectors = np.concatenate([encoder.encode([t], batch_size=1) for t in texts])
    else:  # as the encoding job: chunks of 8,192 in the encoder's batches
        vectors = np.concatenate([encoder.encode(texts[i : i + 8192]) for i in range(0, len(texts), 8192)])
    seconds = time.perf_counter() - started
    print(f"encoded {len(texts):,} texts in {seconds:.0f} s ({len(texts) / seconds:,.0f}/s)", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path.with_suffix(".partial.npy"), vectors)
    os.replace(path.with_suffix(".partial.npy"), path)
    return vectors


def setup() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--shared", type=Path, default=Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    parser.add_argument("--cache", type=Path, default=Path("/tmp/wellchosen-bench-dense"))
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--nprobe", type=int, nargs="+", default=[8, 16, 32, 64, 128])
    parser.add_argument("--rerank", type=int, nargs="+", default=[0, 4, 8])
    parser.add_argument("--pq-bytes", type=int, default=48)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--encode-only", action="store_true")
    parser.add_argument("--vectors", type=Path, help="an embedding store folder whose vectors are indexed instead")
    parser.add_argument(
        "--store-errors",
        action="store_true",
        help="instead: IVF-PQ without OPQ, and the cosine error of int8 and PQ-reconstructed vectors",
    )
    args = parser.parse_args()
    if not (args.shared / "dailydialog").is_dir():
        sys.exit(f"real data not found at {args.shared} (set WELLCHOSEN_SHARED_DATA)")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    return args


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Row numbers of the exact float32 top k (ties by row, as the project orders them)."""
    out = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), 256):
        scores = queries[start : start + 256] @ vectors.T
        part = np.argpartition(-scores, k, axis=1)[:, : k + 32]
        picked = np.take_along_axis(scores, part, axis=1)
        order = np.lexsort((part, -picked))[:, :k]
        out[start : start + 256] = np.take_along_axis(part, order, axis=1)
    return out


def recall(found_ids: np.ndarray, truth_ids: np.ndarray) -> float:
    k = truth_ids.shape[1]
    return float(np.mean([len(set(f) & set(t)) / k for f, t in zip(found_ids, truth_ids, strict=True)]))


def timed_search(index, queries: np.ndarray, k: int, batch: int = 128) -> tuple[np.ndarray, float]:
    """Ids found for every query and queries/s, the better of two passes (the machine is shared)."""
    best = math.inf
    for _ in range(2):
        started = time.perf_counter()
        found = np.concatenate([index.search(queries[i : i + batch], k=k)[1] for i in range(0, len(queries), batch)])
        best = min(best, time.perf_counter() - started)
    return found, len(queries) / best


def write_store(folder: Path, vectors: np.ndarray, dtype: str):
    from retrieval.dense.store import EmbeddingStoreWriter

    writer = EmbeddingStoreWriter(folder, count=len(vectors), dim=vectors.shape[1], dtype=dtype, model="bench")
    for start in range(0, len(vectors), 65536):
        block = vectors[start : start + 65536]
        writer.append(np.arange(start + 1, start + 1 + len(block), dtype=np.int64), block)
    return writer.close()


def size(*paths: Path) -> int:
    return sum(p.stat().st_size for p in paths if p.exists())


def main() -> None:
    args = setup()
    import faiss

    from retrieval.dense.search_index import (
        INDEX_FILE,
        LISTS_FILE,
        FaissOptions,
        faiss_index_build,
        faiss_index_open,
    )

    indexed, queries, counts = corpus(args.shared, args.queries)
    query_vectors = encoded(queries, args.cache, alone=True)
    if args.vectors:
        from retrieval.dense.store import EmbeddingStore, decode

        store = EmbeddingStore(args.vectors)
        vectors = np.concatenate([decode(np.asarray(b), store.meta.dtype) for b in np.array_split(store.vectors, 64)])
        counts = {"store": str(args.vectors), "vectors": len(vectors)}
    else:
        vectors = encoded(indexed, args.cache, alone=False)
    print(counts, f"indexed {len(vectors):,}, queries {len(queries):,}", flush=True)
    if args.encode_only:
        return
    if args.store_errors:
        store_errors(vectors, query_vectors, args.k)
        return
    n, dim, k = len(vectors), vectors.shape[1], args.k
    print(f"faiss {faiss.__version__}, {faiss.omp_get_max_threads()} threads, {os.cpu_count()} cores", flush=True)
    truth = exact_top(vectors, query_vectors, k) + 1  # store ids are rows + 1
    work = Path(tempfile.mkdtemp(prefix="bench-dense-"))
    results: list[dict] = []
    try:
        stores = {dtype: write_store(work / f"store-{dtype}", vectors, dtype) for dtype in ("float16", "int8")}
        for tier in ("exact",) if args.vectors else ("exact", "hnsw"):
            folder = work / tier
            folder.mkdir()
            started = time.perf_counter()
            meta = faiss_index_build(stores["float16"], folder=folder, tier=tier)
            build = time.perf_counter() - started
            index = faiss_index_open(stores["float16"], folder)
            found, qps = timed_search(index, query_vectors, k)
            # The exact tier keeps no index file: it reads the store through the page cache.
            ram = size(folder / INDEX_FILE) or size(stores["float16"].folder / "vectors.bin")
            results.append(
                dict(label=meta["factory"], tier=tier, recall=recall(found, truth), qps=qps, build=build, ram=ram / n)
            )
            print(results[-1], flush=True)
        folder = work / "ivfpq"
        folder.mkdir()
        options = FaissOptions(pq_bytes=args.pq_bytes)
        started = time.perf_counter()
        meta = faiss_index_build(stores["float16"], folder=folder, tier="ivfpq", options=options)
        build = time.perf_counter() - started
        print(meta, f"build {build:.1f} s", flush=True)
        # The coarse k-means alone, as the build ran it: the part of training that grows with the store.
        sample = vectors[np.unique(np.linspace(0, n - 1, meta["train"]).astype(np.int64))]
        started = time.perf_counter()
        faiss.Kmeans(dim, meta["nlist"], niter=10, seed=1234).train(sample)  # IndexIVF trains with 10 iterations
        kmeans = time.perf_counter() - started
        print(f"coarse k-means ({meta['nlist']} lists, {len(sample):,} vectors): {kmeans:.1f} s", flush=True)
        codes, lists = size(folder / LISTS_FILE), size(folder / INDEX_FILE)
        for nprobe in args.nprobe:
            for rerank in args.rerank:
                for dtype in ("float16", "int8") if rerank else ("float16",):
                    index = faiss_index_open(stores[dtype], folder, FaissOptions(nprobe=nprobe, rerank=rerank))
                    found, qps = timed_search(index, query_vectors, k)
                    label = f"{meta['factory']}, nprobe {nprobe}, " + (
                        f"re-rank {k}x{rerank} from {dtype} store" if rerank else "PQ scores (no re-rank)"
                    )
                    results.append(
                        dict(
                            label=label,
                            tier="ivfpq",
                            nprobe=nprobe,
                            rerank=rerank,
                            store=dtype if rerank else "",
                            recall=recall(found, truth),
                            qps=qps,
                            build=build,
                            ram=codes / n,
                            fixed=lists,
                        )
                    )
                    print(results[-1], flush=True)
        pools = faiss_index_open(stores["int8"], folder, FaissOptions(nprobe=max(args.nprobe), rerank=max(args.rerank)))
        _, pools_qps = timed_search(pools, query_vectors, 50)
        print(
            f"k=50 (the pool job's fetch), nprobe {max(args.nprobe)}, re-rank x{max(args.rerank)}: {pools_qps:,.0f} q/s"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(results, meta=meta, n=n, dim=dim, counts=counts, queries=len(queries), kmeans=kmeans)


def store_errors(vectors: np.ndarray, queries: np.ndarray, k: int) -> None:
    """What a store of int8 vectors, or of PQ codes alone, does to the cosines of the top-k hits (the
    pool job's paraphrase filter reads them), and IVF-PQ's recall without the OPQ rotation."""
    import faiss

    n, dim = vectors.shape
    top = exact_top(vectors, queries, k)
    exact = np.einsum("qkd,qd->qk", vectors[top], queries)
    int8 = np.clip(np.rint(vectors[top] * 127), -127, 127) / 127
    error = np.abs(np.einsum("qkd,qd->qk", int8, queries) - exact)
    print(f"int8 store: cosine error on the top {k}: mean {error.mean():.4f}, p99 {np.percentile(error, 99):.4f}")
    index = faiss.index_factory(dim, "IVF1024,PQ48", faiss.METRIC_INNER_PRODUCT)
    started = time.perf_counter()
    index.train(vectors[np.unique(np.linspace(0, n - 1, 65536).astype(np.int64))])
    print(f"IVF1024,PQ48 (no OPQ): training {time.perf_counter() - started:.0f} s", flush=True)
    index.add(vectors)
    index.nprobe = 64
    index.make_direct_map()
    rebuilt = np.stack([index.reconstruct(int(i)) for i in top.ravel()]).reshape(*top.shape, dim)
    error = np.abs(np.einsum("qkd,qd->qk", rebuilt, queries) - exact)
    print(f"PQ codes only: cosine error on the top {k}: mean {error.mean():.4f}, p99 {np.percentile(error, 99):.4f}")
    _, found = index.search(queries, k * 8)
    print(f"IVF1024,PQ48 (no OPQ), nprobe 64, PQ scores: recall@{k} {recall(found[:, :k], top):.3f}")
    rescored = np.einsum("qkd,qd->qk", vectors[np.maximum(found, 0)].astype(np.float16).astype(np.float32), queries)
    order = np.lexsort((found, np.where(found < 0, np.inf, -rescored)))[:, :k]
    reranked = np.take_along_axis(found, order, axis=1)
    print(f"IVF1024,PQ48 (no OPQ), nprobe 64, re-rank {k}x8 from float16: recall@{k} {recall(reranked, top):.3f}")


def report(results: list[dict], *, meta: dict, n: int, dim: int, counts: dict, queries: int, kmeans: float) -> None:
    print(f"\n{n:,} vectors ({dim} dims), {queries:,} queries, recall@10 against exact float32 search\n")
    print("| index | recall@10 | queries/s | build s | RAM bytes/vector |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in results:
        print(f"| {r['label']} | {r['recall']:.3f} | {r['qps']:,.0f} | {r['build']:.1f} | {r['ram']:,.0f} |")
    print(json.dumps({"meta": meta, "kmeans": kmeans, "results": results, "counts": counts}, default=str))
    extrapolate(results, meta=meta, n=n, dim=dim, kmeans=kmeans)


def extrapolate(results: list[dict], *, meta: dict, n: int, dim: int, kmeans: float) -> None:
    """Memory, disk, build time and queries/s at 100 M and 441 M, from the measured numbers."""
    from retrieval.dense.search_index import FaissOptions, IvfPqIndex

    defaults = FaissOptions.from_settings()
    exact = next(r for r in results if r["tier"] == "exact")
    hnsw = next((r for r in results if r["tier"] == "hnsw"), None)  # left out with --vectors
    fit = [r for r in results if r["tier"] == "ivfpq" and r["rerank"] == defaults.rerank and r["store"] == "int8"]
    chosen = min(fit, key=lambda r: abs(r["nprobe"] - defaults.nprobe))
    # queries/s of IVF-PQ = 1 / (fixed + per scanned code x codes scanned), fitted over the nprobes measured
    lengths = np.array([r["nprobe"] * n / meta["nlist"] for r in fit])
    seconds = np.array([1 / r["qps"] for r in fit])
    per_code, fixed = np.polyfit(lengths, seconds, 1) if len(fit) > 1 else (seconds[0] / lengths[0], 0.0)
    fixed = max(fixed, 0.0)
    add_rate = n / max(meta["add_seconds"], 1e-9)
    rotation = meta["train_seconds"] - kmeans  # OPQ and PQ training: FAISS caps their samples at 65,536
    print(f"\nIVF-PQ: {fixed * 1e3:.2f} ms per query + {per_code * 1e9:.1f} ns per scanned code (fit)")
    print(f"training {meta['train_seconds']:.0f} s = coarse k-means {kmeans:.0f} s + OPQ and PQ {rotation:.0f} s")
    print(f"adding {add_rate:,.0f} vectors/s; the settings: nprobe {chosen['nprobe']}, re-rank x{defaults.rerank}")
    print(f"from an int8 store: recall@10 {chosen['recall']:.3f}\n")
    print("| utterances | index | RAM | disk | build | queries/s |")
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    for total in (100_000_000, 441_000_000):
        label = f"{total / 1e6:,.0f} M"
        flat_build, flat_qps = hours(exact["build"] / n * total), exact["qps"] * n / total
        print(f"| {label} | {exact['label']} | {gb(exact['ram'] * total)} | same | {flat_build} | {flat_qps:.2f} |")
        if hnsw is not None:
            hnsw_build = hours(hnsw["build"] / n * total * math.log(total) / math.log(n))
            hnsw_qps = hnsw["qps"] * math.log(n) / math.log(total)
            print(f"| {label} | HNSW32,SQfp16 | {gb(hnsw['ram'] * total)} | same | {hnsw_build} | {hnsw_qps:,.0f} |")
        layout = IvfPqIndex.layout(total, dim, meta["m"])
        codes = (layout["m"] + 8) * total
        coarse = kmeans * (layout["train"] * layout["nlist"]) / (meta["train"] * meta["nlist"])
        build = rotation + coarse + total / add_rate
        qps = 1 / (fixed + per_code * chosen["nprobe"] * total / layout["nlist"])
        print(
            f"| {label} | {layout['factory']} | {gb(codes)} codes (memory-mapped) | {gb(codes)} "
            f"+ int8 store {gb(dim * total)} | {hours(build)} (k-means {hours(coarse)}) | {qps:,.0f} |"
        )


def gb(value: float) -> str:
    return f"{value / 1e9:,.1f} GB" if value < 1e12 else f"{value / 1e12:,.2f} TB"


def hours(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} h" if seconds >= 3600 else f"{seconds / 60:,.0f} min"


if __name__ == "__main__":
    main()
