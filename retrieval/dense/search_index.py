"""Dense search over an embedding store, in three tiers chosen by the store's size.

- ``exact`` (up to ``exact_max``, 2 M): inner product with every vector of the float16 store by
  float32 GEMM, block by block (``exact_gemm``): no index of its own; the store's 768 bytes per
  vector at 384 dimensions are read through the page cache, shared by every worker process.
  An exact folder built by FAISS (``SQfp16``) before still opens: its ``faiss.index`` is ignored.
- ``hnsw`` (up to ``hnsw_max``, 10 M): ``HNSW32,SQfp16``, a graph over the same float16 vectors:
  about 1 KB of RAM per vector.
- ``ivfpq`` (above): ``OPQ{m},IVF{nlist},PQ{m}``, trained on an evenly spaced sample of the store.
  Each vector is an ``m``-byte product-quantisation code (48 by default) plus its 8-byte row in an
  inverted list; the lists live in ``faiss.ivfdata`` beside the index, memory-mapped (the page
  cache holds the hot lists, shared by every worker process on the machine). Only ``nprobe`` lists
  are scanned per query, and the ``k × rerank`` best candidates by PQ score are re-scored exactly
  from the store's vectors (see ``base.DenseIndex``). Vectors are added in blocks written to disk
  and merged into the on-disk lists, so a build holds one block's codes in memory, not the index.

Vectors are L2-normalised, so inner product is cosine similarity. Row i of the store is id i of
the index; ``faiss.json`` records the tier and its parameters (HNSW and IVF-PQ are FAISS indexes).
"""

import json
import math
import shutil
import time
from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import faiss
import numpy as np
from django.conf import settings

from .base import DenseIndex
from .exact_gemm import exact_top
from .store import CHUNK, EmbeddingStore

INDEX_FILE, LISTS_FILE, META_FILE = "faiss.index", "faiss.ivfdata", "faiss.json"
_ADD_BLOCK = 1 << 22  # vectors per on-disk block of an IVF-PQ build (4 M x 56 bytes in memory)


@dataclass(frozen=True)
class FaissOptions:
    exact_max: int = 2_000_000
    hnsw_max: int = 10_000_000
    pq_bytes: int = 48  # bytes per PQ code (subquantizers); a divisor of the dimension
    nprobe: int = 64
    rerank: int = 8
    ef_search: int = 128

    @classmethod
    def from_settings(cls) -> "FaissOptions":
        return cls(
            exact_max=settings.WELLCHOSEN_FAISS_EXACT_MAX,
            hnsw_max=settings.WELLCHOSEN_FAISS_HNSW_MAX,
            pq_bytes=settings.WELLCHOSEN_FAISS_PQ_BYTES,
            nprobe=settings.WELLCHOSEN_FAISS_NPROBE,
            rerank=settings.WELLCHOSEN_DENSE_RERANK,
        )


class FaissIndex(DenseIndex):
    """A FAISS tier: how it is built from a store and opened again."""

    tier: ClassVar[str] = ""

    def __init__(self, store: EmbeddingStore, folder: Path, meta: dict, options: FaissOptions) -> None:
        super().__init__(store, rerank=options.rerank)
        self.folder, self.meta = Path(folder), meta
        self.index = self._read(self.folder / INDEX_FILE, options)

    @classmethod
    @abstractmethod
    def fits(cls, count: int, options: FaissOptions) -> bool:
        """Whether a store of ``count`` vectors gets this tier (tiers are tried smallest first)."""

    @classmethod
    @abstractmethod
    def build(cls, store: EmbeddingStore, folder: Path, options: FaissOptions) -> dict:
        """Write the index files for the store into ``folder``; return what ``faiss.json`` records."""

    def _read(self, path: Path, options: FaissOptions) -> faiss.Index:
        return faiss.read_index(str(path))

    def describe(self) -> str:
        return self.meta.get("factory", self.tier)

    def candidates(self, queries: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(queries, limit)


class _FlatTier(FaissIndex):
    """Every vector in one FAISS structure built in memory from the store's chunks."""

    factory: ClassVar[str] = ""

    @classmethod
    def build(cls, store: EmbeddingStore, folder: Path, options: FaissOptions) -> dict:
        index = faiss.index_factory(store.meta.dim, cls.factory, faiss.METRIC_INNER_PRODUCT)
        if not index.is_trained:
            index.train(np.zeros((1, store.meta.dim), dtype=np.float32))  # fp16 SQ needs no real training
        for chunk in store.chunks():
            index.add(chunk)
        faiss.write_index(index, str(Path(folder) / INDEX_FILE))
        return {"factory": cls.factory}


class ExactIndex(FaissIndex):
    kind = tier = "exact"
    factory = "GEMM"

    @classmethod
    def fits(cls, count: int, options: FaissOptions) -> bool:
        return count <= options.exact_max

    @classmethod
    def build(cls, store: EmbeddingStore, folder: Path, options: FaissOptions) -> dict:
        return {"factory": cls.factory}  # searches the store itself

    def _read(self, path: Path, options: FaissOptions) -> None:
        return None

    def describe(self) -> str:
        return "exact float32 GEMM over the float16 store"

    def candidates(self, queries: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
        return exact_top(self.store, queries, limit)


class HnswIndex(_FlatTier):
    kind = tier = "hnsw"
    factory = "HNSW32,SQfp16"

    @classmethod
    def fits(cls, count: int, options: FaissOptions) -> bool:
        return count <= options.hnsw_max

    def _read(self, path: Path, options: FaissOptions) -> faiss.Index:
        index = faiss.read_index(str(path))
        index.hnsw.efSearch = options.ef_search
        return index


class IvfPqIndex(FaissIndex):
    kind = tier = "ivfpq"
    rescore = True

    @classmethod
    def fits(cls, count: int, options: FaissOptions) -> bool:
        return True

    @staticmethod
    def layout(count: int, dim: int, pq_bytes: int) -> dict:
        """nlist ≈ 4·√count (a power of two; at least 39 training vectors per list, FAISS's floor),
        m = the largest divisor of the dimension up to ``pq_bytes``, 8-bit codes when the sample
        trains 256 centroids per subquantizer, a training sample of 64 vectors per list (at least
        65,536), an HNSW coarse quantizer above 16,384 lists. Tiny stores (tests) get fewer bits
        and no OPQ rotation (FAISS's OPQ training corrupts memory on a handful of vectors)."""
        nlist = 1 << max(0, round(math.log2(max(1.0, 4 * math.sqrt(count)))))
        nlist = max(1, min(nlist, 1 << 16, 1 << int(math.log2(max(1, count // 39)))))
        train = min(count, max(64 * nlist, 1 << 16))
        m = max(d for d in range(1, min(pq_bytes, dim) + 1) if dim % d == 0)
        nbits = max(1, min(8, int(math.log2(max(2, train // 39)))))
        coarse = f"IVF{nlist}_HNSW32" if nlist > 16384 else f"IVF{nlist}"
        code, rotation = (f"PQ{m}", f"OPQ{m},") if nbits == 8 else (f"PQ{m}x{nbits}", "")
        return {"factory": f"{rotation}{coarse},{code}", "nlist": nlist, "m": m, "nbits": nbits, "train": train}

    @classmethod
    def build(cls, store: EmbeddingStore, folder: Path, options: FaissOptions) -> dict:
        folder, count, dim = Path(folder), store.meta.count, store.meta.dim
        meta = cls.layout(count, dim, options.pq_bytes)
        index = faiss.index_factory(dim, meta["factory"], faiss.METRIC_INNER_PRODUCT)
        started = time.perf_counter()
        sample = np.unique(np.linspace(0, count - 1, meta["train"]).astype(np.int64))
        index.train(store.rows(sample))
        meta["train_seconds"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        blocks_dir = folder / "faiss-blocks"
        blocks_dir.mkdir(parents=True, exist_ok=True)
        try:
            trained = blocks_dir / "trained.index"
            faiss.write_index(index, str(trained))
            blocks = []
            for number, start in enumerate(range(0, count, _ADD_BLOCK)):
                block = faiss.read_index(str(trained))
                stop = min(count, start + _ADD_BLOCK)
                for first in range(start, stop, CHUNK):
                    chunk = store.between(first, min(stop, first + CHUNK))
                    block.add_with_ids(chunk, np.arange(first, first + len(chunk), dtype=np.int64))
                blocks.append(str(blocks_dir / f"block-{number}.index"))
                faiss.write_index(block, blocks[-1])
                del block
            from faiss.contrib.ondisk import merge_ondisk

            merged = faiss.read_index(str(trained))
            merge_ondisk(merged, blocks, str(folder / LISTS_FILE))
            faiss.write_index(merged, str(folder / INDEX_FILE))
        finally:
            shutil.rmtree(blocks_dir, ignore_errors=True)
        meta["add_seconds"] = round(time.perf_counter() - started, 1)
        return meta

    def _read(self, path: Path, options: FaissOptions) -> faiss.Index:
        # The lists stay on disk (memory-mapped); their file is found beside the index.
        index = faiss.read_index(str(path), faiss.IO_FLAG_ONDISK_SAME_DIR)
        faiss.extract_index_ivf(index).nprobe = options.nprobe
        return index


TIERS: tuple[type[FaissIndex], ...] = (ExactIndex, HnswIndex, IvfPqIndex)


def faiss_tier(name: str) -> type[FaissIndex]:
    for tier in TIERS:
        if tier.tier == name:
            return tier
    raise ValueError(f"unknown FAISS tier {name!r}; expected one of {[t.tier for t in TIERS]}")


def faiss_index_build(
    store: EmbeddingStore, *, folder: Path, options: FaissOptions | None = None, tier: str | None = None
) -> dict:
    """Build the index of the store's rows into ``folder``, in the tier its size calls for (or
    ``tier``); return what ``faiss.json`` records (``tier``, ``factory`` and the tier's layout)."""
    options = options or FaissOptions.from_settings()
    chosen = faiss_tier(tier) if tier else next(t for t in TIERS if t.fits(store.meta.count, options))
    meta = {"tier": chosen.tier, "count": store.meta.count, **chosen.build(store, Path(folder), options)}
    (Path(folder) / META_FILE).write_text(json.dumps(meta))
    return meta


def faiss_index_open(store: EmbeddingStore, folder: Path, options: FaissOptions | None = None) -> FaissIndex:
    folder = Path(folder)
    meta_path = folder / META_FILE
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
    else:  # built before the tiers were recorded: exact or HNSW, told by the index itself
        kind = type(faiss.read_index(str(folder / INDEX_FILE), faiss.IO_FLAG_MMAP)).__name__
        meta = {"tier": "hnsw" if "HNSW" in kind else "exact"}
    return faiss_tier(meta["tier"])(store, folder, meta, options or FaissOptions.from_settings())
