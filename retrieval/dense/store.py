"""Embeddings on disk: a memory-mapped matrix (float16 or int8) with a sorted id column.

Not database rows: a subtitle repository has hundreds of millions of utterances and 384
floats each; the matrix is read through the page cache, a row at a time or in chunks.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DTYPES = ("float16", "int8")
_INT8_SCALE = 127.0  # vectors are L2-normalised, so every component lies in [-1, 1]
CHUNK = 65536  # rows decoded at a time when a whole store is read


@dataclass(frozen=True)
class StoreMeta:
    model: str
    dim: int
    count: int
    dtype: str


class EmbeddingStore:
    """``ids.npy`` (int64, ascending), ``vectors.bin`` (count x dim) and ``meta.json`` in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.meta = StoreMeta(**json.loads((self.folder / "meta.json").read_text()))
        self.ids = np.load(self.folder / "ids.npy", mmap_mode="r")
        self.vectors = np.memmap(
            self.folder / "vectors.bin", dtype=self.meta.dtype, mode="r", shape=(self.meta.count, self.meta.dim)
        )

    @staticmethod
    def exists(folder: Path) -> bool:
        return (Path(folder) / "meta.json").exists()

    def positions(self, utterance_ids) -> np.ndarray:
        """Row of each id; -1 for ids that are not in the store."""
        wanted = np.asarray(utterance_ids, dtype=np.int64)
        rows = np.searchsorted(self.ids, wanted)
        rows = np.minimum(rows, len(self.ids) - 1) if len(self.ids) else np.full_like(wanted, -1)
        found = (rows >= 0) & (self.ids[rows] == wanted) if len(self.ids) else np.zeros_like(wanted, dtype=bool)
        return np.where(found, rows, -1)

    def vectors_for(self, utterance_ids) -> np.ndarray:
        """float32 vectors for the ids (zeros for unknown ids)."""
        rows = self.positions(utterance_ids)
        out = np.zeros((len(rows), self.meta.dim), dtype=np.float32)
        known = rows >= 0
        if known.any():
            out[known] = decode(np.asarray(self.vectors[np.sort(rows[known])]), self.meta.dtype)[
                np.argsort(np.argsort(rows[known]))
            ]
        return out

    def chunks(self, size: int = CHUNK):
        """float32 row blocks in order, for building a search index."""
        for start in range(0, self.meta.count, size):
            yield self.between(start, start + size)

    def between(self, start: int, stop: int) -> np.ndarray:
        """float32 vectors of rows ``start`` to ``stop`` (excluded)."""
        return decode(np.asarray(self.vectors[start:stop]), self.meta.dtype)

    def rows(self, positions: np.ndarray) -> np.ndarray:
        """float32 vectors of the rows at ``positions`` (ascending, for sequential reads)."""
        return decode(np.asarray(self.vectors[np.asarray(positions, dtype=np.int64)]), self.meta.dtype)


def encode_rows(vectors: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "float16":
        return vectors.astype(np.float16)
    if dtype == "int8":
        return np.clip(np.rint(vectors * _INT8_SCALE), -127, 127).astype(np.int8)
    raise ValueError(f"unknown embedding dtype {dtype!r}; expected one of {DTYPES}")


def decode(rows: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "int8":
        return rows.astype(np.float32) / _INT8_SCALE
    return rows.astype(np.float32)


class EmbeddingStoreWriter:
    """Fills a store in id order, chunk by chunk; the folder only becomes a store when closed."""

    def __init__(self, folder: Path, *, count: int, dim: int, dtype: str, model: str) -> None:
        if dtype not in DTYPES:
            raise ValueError(f"unknown embedding dtype {dtype!r}; expected one of {DTYPES}")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=False)
        self.meta = StoreMeta(model=model, dim=dim, count=count, dtype=dtype)
        self._ids = np.lib.format.open_memmap(self.folder / "ids.npy", mode="w+", dtype=np.int64, shape=(count,))
        self._vectors = np.memmap(self.folder / "vectors.bin", dtype=dtype, mode="w+", shape=(max(count, 1), dim))
        self.written = 0

    def append(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        n = len(ids)
        if self.written + n > self.meta.count:
            raise ValueError("more rows than the store was created for")
        if n and self.written and ids[0] <= self._ids[self.written - 1]:
            raise ValueError("ids must be appended in ascending order")
        self._ids[self.written : self.written + n] = ids
        self._vectors[self.written : self.written + n] = encode_rows(vectors, self.meta.dtype)
        self.written += n

    def close(self) -> EmbeddingStore:
        if self.written != self.meta.count:
            raise ValueError(f"store expected {self.meta.count} rows, got {self.written}")
        self._ids.flush()
        self._vectors.flush()
        del self._ids, self._vectors
        (self.folder / "meta.json").write_text(json.dumps(self.meta.__dict__))
        return EmbeddingStore(self.folder)
