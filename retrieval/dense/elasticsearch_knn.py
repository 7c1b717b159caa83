"""Dense search on an Elasticsearch cluster: approximate kNN over quantised HNSW graphs.

One index per repository and version, ``wellchosen-vectors.<folder>`` (``<folder>`` is the
embedding version's folder name, e.g. ``subtitles-v3``; a dot never appears in a repository's slug,
so the name cannot meet a BM25 index's ``wellchosen-<repository>-vN``). The utterance id is the
document ``_id``; the only field, ``vector``, is a ``dense_vector`` with ``dot_product`` similarity
(the vectors are L2-normalised) and an explicit quantised HNSW type: ``bbq_hnsw`` (1 bit per
dimension plus corrections, 32x smaller than float32 in memory) on servers from 8.18, where it is
generally available, for 64 dimensions and more; ``int8_hnsw`` (4x smaller) otherwise, or as
``WELLCHOSEN_ES_VECTOR_INDEX`` says. ``_source`` is disabled.

Vectors are bulk-indexed by the encoding step, a chunk of encoded utterances at a time (the local
embedding store is written beside them: pools read a hit's vector from it, and the ``k × rerank``
candidates that the cluster returns are re-scored exactly from it, so that scores are the same
cosines as FAISS's and ties are ordered by utterance id; see ``base.DenseIndex``). Queries go in
batches through ``_msearch``. Tested through the real client against tests/retrieval/es_double.py.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from elasticsearch import ApiError, Elasticsearch, TransportError
from elasticsearch.helpers import parallel_bulk

from retrieval.lexical.elasticsearch_backend import (
    ElasticsearchBackendError,
    _error_type,
    _reason,
    bulk_load_errors,
)

from .base import DenseIndex
from .store import EmbeddingStore

FIELD = "vector"
PREFIX = "wellchosen-vectors."
MAX_CANDIDATES = 10_000  # Elasticsearch's ceiling on num_candidates
BBQ_FROM = (8, 18)  # bbq_hnsw: technical preview in 8.16 and 8.17, generally available from 8.18
HNSW = {"m": 16, "ef_construction": 100}
_DECIMALS = 5  # enough for int8 or 1-bit quantisation, and keeps a unit vector unit (within 1e-4)


def index_name_for(folder_name: str) -> str:
    return PREFIX + folder_name.lower()


def vector_index_type(*, server_version: str, dims: int, configured: str = "auto") -> str:
    """The quantised HNSW type for a new index on this server."""
    if configured != "auto":
        return configured
    major, minor = (int(part) for part in server_version.split(".")[:2])
    return "bbq_hnsw" if (major, minor) >= BBQ_FROM and dims >= 64 else "int8_hnsw"


def vector_index_body(*, dims: int, index_type: str) -> dict[str, Any]:
    """Settings and mapping of a new vector index (``refresh_interval`` is restored after the load)."""
    return {
        "settings": {"number_of_replicas": 0, "refresh_interval": "-1"},
        "mappings": {
            "dynamic": "strict",
            "_source": {"enabled": False},
            "properties": {
                FIELD: {
                    "type": "dense_vector",
                    "dims": dims,
                    "index": True,
                    "similarity": "dot_product",
                    "index_options": {"type": index_type, **HNSW},
                }
            },
        },
    }


def _vector(row: np.ndarray) -> list[float]:
    return np.round(row.astype(np.float64), _DECIMALS).tolist()


class ElasticsearchKnnWriter:
    """Creates the index, bulk-loads vectors chunk by chunk, then makes them searchable.

    ``create=False``: the index exists (a build in shards: each shard's worker loads its own
    vectors into the index the job's worker created). A vector loaded twice (a shard taken over)
    is the same document, under its utterance id."""

    def __init__(
        self,
        *,
        client: Elasticsearch,
        index_name: str,
        dims: int,
        index_type: str = "auto",
        bulk_threads: int = 2,
        bulk_chunk: int = 500,
        create: bool = True,
    ) -> None:
        self.client, self.index_name = client, index_name
        self.bulk_threads, self.bulk_chunk = bulk_threads, bulk_chunk
        self.index_type = vector_index_type(
            server_version=client.info()["version"]["number"], dims=dims, configured=index_type
        )
        self.written = 0
        if not create:
            return
        try:
            client.indices.create(index=index_name, **vector_index_body(dims=dims, index_type=self.index_type))
        except ApiError as exc:
            if _error_type(exc) == "resource_already_exists_exception":
                raise ElasticsearchBackendError(
                    f"Elasticsearch index {index_name!r} already exists; build a new version or delete it first"
                ) from exc
            raise ElasticsearchBackendError(f"cannot create Elasticsearch index {index_name!r}: {exc}") from exc

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        actions = (
            {"_op_type": "index", "_index": self.index_name, "_id": str(int(i)), FIELD: _vector(v)}
            for i, v in zip(ids, vectors, strict=True)
        )
        left_as_is = f"index {self.index_name!r} is left incomplete and is deleted with the failed build"
        with bulk_load_errors(index_name=self.index_name, items="vector", left_as_is=left_as_is):
            for _ok, _item in parallel_bulk(
                self.client,
                actions,
                thread_count=self.bulk_threads,
                chunk_size=self.bulk_chunk,
                raise_on_error=True,
                raise_on_exception=True,
            ):
                self.written += 1

    def finish(self, expected: int) -> None:
        self.client.indices.put_settings(index=self.index_name, settings={"index": {"refresh_interval": "1s"}})
        self.client.indices.refresh(index=self.index_name)
        found = int(self.client.count(index=self.index_name)["count"])
        if found != expected:
            raise ElasticsearchBackendError(
                f"Elasticsearch index {self.index_name!r} holds {found} vectors, the store {expected}"
            )


class ElasticsearchKnnIndex(DenseIndex):
    kind = "elasticsearch"
    rescore = True
    max_candidates = MAX_CANDIDATES

    def __init__(
        self, store: EmbeddingStore, *, client: Elasticsearch, index_name: str, rerank: int, msearch_batch: int = 64
    ) -> None:
        super().__init__(store, rerank=rerank)
        self.client, self.index_name, self.msearch_batch = client, index_name, msearch_batch

    def describe(self) -> str:
        return f"elasticsearch:{self.index_name}"

    def cosine(self, engine_scores: np.ndarray) -> np.ndarray:
        return (2.0 * engine_scores - 1.0).astype(np.float32)  # dot_product scores are (1 + cosine) / 2

    def candidates(self, queries: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
        scores = np.full((len(queries), limit), -np.inf, dtype=np.float32)
        rows = np.full((len(queries), limit), -1, dtype=np.int64)
        for start in range(0, len(queries), self.msearch_batch):
            batch = queries[start : start + self.msearch_batch]
            for offset, hits in enumerate(self._msearch(batch, limit)):
                if not hits:
                    continue
                ids, found = zip(*hits, strict=True)
                positions = self.store.positions(np.asarray(ids, dtype=np.int64))
                if (positions < 0).any():
                    unknown = np.asarray(ids)[positions < 0][:3].tolist()
                    raise ElasticsearchBackendError(
                        f"Elasticsearch index {self.index_name!r} returned utterances {unknown} that its "
                        "embedding store does not hold; the two come from different builds"
                    )
                rows[start + offset, : len(hits)] = positions
                scores[start + offset, : len(hits)] = found
        return scores, rows

    def _msearch(self, queries: np.ndarray, limit: int) -> list[Sequence[tuple[int, float]]]:
        """One _msearch round trip: each query's (utterance id, score) hits, best first."""
        body: list[dict[str, Any]] = []
        knn = {"field": FIELD, "k": limit, "num_candidates": min(MAX_CANDIDATES, 2 * limit)}
        for query in queries:
            body.append({})
            body.append(
                {
                    "knn": {**knn, "query_vector": _vector(query)},
                    "size": limit,
                    "_source": False,
                    "track_total_hits": False,
                }
            )
        try:
            response = self.client.msearch(index=self.index_name, searches=body)
        except (ApiError, TransportError) as exc:
            raise ElasticsearchBackendError(f"kNN search in {self.index_name!r} failed: {exc}") from exc
        answers = []
        for answer in response["responses"]:
            if "error" in answer:
                raise ElasticsearchBackendError(
                    f"Elasticsearch kNN search in {self.index_name!r} failed "
                    f"(status {answer.get('status')}): {_reason(answer['error'])}"
                )
            answers.append([(int(hit["_id"]), float(hit["_score"])) for hit in answer["hits"]["hits"]])
        return answers
