"""Where dense search runs: FAISS on the worker, or kNN on the Elasticsearch cluster
(``WELLCHOSEN_DENSE_SEARCH``). A backend is fed the encoded chunks while the embedding store is
written, finishes its index from the store, opens it for search and deletes it. A build in shards
(retrieval.services.encoding_shards) begins it on the job's worker, feeds it from each shard's
worker (``attach``) and finishes it on the job's worker again."""

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

import numpy as np
from django.conf import settings
from elasticsearch import Elasticsearch

from .base import DenseIndex
from .elasticsearch_knn import ElasticsearchKnnIndex, ElasticsearchKnnWriter, index_name_for
from .search_index import faiss_index_build, faiss_index_open
from .store import EmbeddingStore

STORE_FOLDER = "store"


class DenseBackend(ABC):
    """The build of one embedding version's search index in ``folder`` (the store is ``folder/store``)."""

    name: ClassVar[str] = ""

    def __init__(self, *, folder: Path, dim: int, count: int) -> None:
        self.folder, self.dim, self.count = Path(folder), dim, count

    @classmethod
    def attach(cls, *, folder: Path, dim: int, count: int, params: dict) -> "DenseBackend":
        """The build that another process began, whose ``shared_params`` are in ``params``: to be
        fed a shard's chunks, or finished."""
        return cls(folder=folder, dim=dim, count=count)

    def shared_params(self) -> dict:
        """What ``attach`` needs to reach this build from another process."""
        return {}

    @abstractmethod
    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """One chunk of encoded utterances, in id order, as it is written to the store."""

    @abstractmethod
    def finish(self, store: EmbeddingStore) -> dict:
        """Complete the index once the store is; return the parameters the version records."""

    @classmethod
    @abstractmethod
    def open(cls, *, folder: Path, params: dict) -> DenseIndex:
        """The index of a ready version, for search."""

    @classmethod
    @abstractmethod
    def delete(cls, *, folder: Path, params: dict) -> None:
        """Remove what the index keeps outside ``folder`` (the caller removes the folder)."""


class FaissBackend(DenseBackend):
    name = "faiss"

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        pass  # built from the finished store, not chunk by chunk: IVF-PQ trains on a sample of all of it

    def finish(self, store: EmbeddingStore) -> dict:
        meta = faiss_index_build(store, folder=self.folder)
        return {"faiss": meta["factory"], "faiss_tier": meta["tier"]}

    @classmethod
    def open(cls, *, folder: Path, params: dict) -> DenseIndex:
        return faiss_index_open(EmbeddingStore(Path(folder) / STORE_FOLDER), folder)

    @classmethod
    def delete(cls, *, folder: Path, params: dict) -> None:
        pass  # everything is in the folder


class ElasticsearchDenseBackend(DenseBackend):
    name = "elasticsearch"

    def __init__(self, *, folder: Path, dim: int, count: int, existing: dict | None = None) -> None:
        """Creates the version's cluster index; ``existing``: the ``shared_params`` of one created before."""
        super().__init__(folder=folder, dim=dim, count=count)
        self.writer = ElasticsearchKnnWriter(
            client=_client(),
            index_name=existing["es_index"] if existing else index_name_for(self.folder.name),
            dims=dim,
            index_type=existing["es_vector_index"] if existing else settings.WELLCHOSEN_ES_VECTOR_INDEX,
            create=existing is None,
        )

    @classmethod
    def attach(cls, *, folder: Path, dim: int, count: int, params: dict) -> DenseBackend:
        return cls(folder=folder, dim=dim, count=count, existing=params)

    def shared_params(self) -> dict:
        return {"es_index": self.writer.index_name, "es_vector_index": self.writer.index_type}

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        self.writer.add(ids, vectors)

    def finish(self, store: EmbeddingStore) -> dict:
        self.writer.finish(expected=store.meta.count)
        return {"es_index": self.writer.index_name, "es_vector_index": self.writer.index_type}

    @classmethod
    def open(cls, *, folder: Path, params: dict) -> DenseIndex:
        return ElasticsearchKnnIndex(
            EmbeddingStore(Path(folder) / STORE_FOLDER),
            client=_client(),
            index_name=params.get("es_index") or index_name_for(Path(folder).name),
            rerank=settings.WELLCHOSEN_DENSE_RERANK,
        )

    @classmethod
    def delete(cls, *, folder: Path, params: dict) -> None:
        name = params.get("es_index") or index_name_for(Path(folder).name)
        _client().options(ignore_status=404).indices.delete(index=name)


BACKENDS: dict[str, type[DenseBackend]] = {b.name: b for b in (FaissBackend, ElasticsearchDenseBackend)}


def dense_backend(name: str | None = None) -> type[DenseBackend]:
    """The backend of that name; the configured one (``WELLCHOSEN_DENSE_SEARCH``) by default."""
    name = name or settings.WELLCHOSEN_DENSE_SEARCH
    if name not in BACKENDS:
        raise ValueError(
            f"unknown dense search backend {name!r} (WELLCHOSEN_DENSE_SEARCH); expected one of {list(BACKENDS)}"
        )
    return BACKENDS[name]


def _client() -> Elasticsearch:
    if not settings.ELASTICSEARCH_URL:
        raise ValueError("WELLCHOSEN_DENSE_SEARCH=elasticsearch needs ELASTICSEARCH_URL (the cluster to search)")
    return Elasticsearch(settings.ELASTICSEARCH_URL, request_timeout=120, retry_on_timeout=True, max_retries=3)
