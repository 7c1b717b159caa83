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


ALLOCATED = "allocated.json"  # the meta of a store whose rows are still being written


def store_allocate(folder: Path, *, count: int, dim: int, dtype: str, model: str) -> StoreMeta:
    """Create the store's files at their full size, every row still empty. The store only becomes
    one (``meta.json``) once ``store_complete`` has checked that every row was written; until
    then its meta is in ``allocated.json``, where the writers of its blocks read it."""
    if dtype not in DTYPES:
        raise ValueError(f"unknown embedding dtype {dtype!r}; expected one of {DTYPES}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=False)
    meta = StoreMeta(model=model, dim=dim, count=count, dtype=dtype)
    ids = np.lib.format.open_memmap(folder / "ids.npy", mode="w+", dtype=np.int64, shape=(count,))
    vectors = np.memmap(folder / "vectors.bin", dtype=dtype, mode="w+", shape=(max(count, 1), dim))
    del ids, vectors
    (folder / ALLOCATED).write_text(json.dumps(meta.__dict__))
    return meta


class StoreBlockWriter:
    """Writes rows ``offset`` to ``offset + count`` of an allocated store, in id order, in place:
    one block per writer, so that several processes fill one store, each its own rows."""

    def __init__(self, folder: Path, *, offset: int, count: int) -> None:
        self.folder = Path(folder)
        self.meta = StoreMeta(**json.loads((self.folder / ALLOCATED).read_text()))
        if offset < 0 or offset + count > self.meta.count:
            raise ValueError(f"rows {offset} to {offset + count} are outside a store of {self.meta.count}")
        self.offset, self.count, self.written = offset, count, 0
        self._ids = np.load(self.folder / "ids.npy", mmap_mode="r+")
        shape = (max(self.meta.count, 1), self.meta.dim)
        self._vectors = np.memmap(self.folder / "vectors.bin", dtype=self.meta.dtype, mode="r+", shape=shape)

    def append(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        n = len(ids)
        if self.written + n > self.count:
            raise ValueError("more rows than the block was created for")
        at = self.offset + self.written
        if n and self.written and ids[0] <= self._ids[at - 1]:
            raise ValueError("ids must be appended in ascending order")
        self._ids[at : at + n] = ids
        self._vectors[at : at + n] = encode_rows(vectors, self.meta.dtype)
        self.written += n

    def flush(self) -> None:
        """Write the block's rows to disk; it must be complete."""
        if self.written != self.count:
            raise ValueError(f"block expected {self.count} rows, got {self.written}")
        self._ids.flush()
        self._vectors.flush()
        del self._ids, self._vectors


def store_complete(folder: Path) -> EmbeddingStore:
    """The allocated store as a store, once its ids ascend from the first row to the last: a row
    never written (id 0) after one that was breaks the order."""
    folder = Path(folder)
    meta = StoreMeta(**json.loads((folder / ALLOCATED).read_text()))
    ids = np.load(folder / "ids.npy", mmap_mode="r")
    previous = -1
    for start in range(0, meta.count, CHUNK * 16):
        block = np.asarray(ids[start : start + CHUNK * 16])
        if block[0] <= previous or (np.diff(block) <= 0).any():
            raise ValueError(f"store {folder}: rows from {start} were not all written, or not in id order")
        previous = int(block[-1])
    del ids
    (folder / "meta.json").write_text(json.dumps(meta.__dict__))
    (folder / ALLOCATED).unlink()
    return EmbeddingStore(folder)


class EmbeddingStoreWriter:
    """Fills a store in id order, chunk by chunk, as one block; the folder only becomes a store when closed."""

    def __init__(self, folder: Path, *, count: int, dim: int, dtype: str, model: str) -> None:
        self.folder = Path(folder)
        self.meta = store_allocate(self.folder, count=count, dim=dim, dtype=dtype, model=model)
        self._block = StoreBlockWriter(self.folder, offset=0, count=count)

    @property
    def written(self) -> int:
        return self._block.written

    def append(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        if self._block.written + len(ids) > self.meta.count:
            raise ValueError("more rows than the store was created for")
        self._block.append(ids, vectors)

    def close(self) -> EmbeddingStore:
        if self.written != self.meta.count:
            raise ValueError(f"store expected {self.meta.count} rows, got {self.written}")
        self._block.flush()
        return store_complete(self.folder)
