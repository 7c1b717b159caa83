"""Reads: current search indexes and their open handles."""

import threading
from pathlib import Path

from django.conf import settings

from annotation.models import Repository
from retrieval.dense.encoder import get_encoder
from retrieval.dense.search_index import DenseIndex
from retrieval.dense.store import EmbeddingStore
from retrieval.lexical.base import LexicalBackend
from retrieval.models import IndexKind, IndexStatus, RetrievalIndex

_open: dict[tuple, object] = {}
_lock = threading.Lock()


def index_current(*, repository: Repository, kind: str) -> RetrievalIndex | None:
    """The newest ready index of that kind built from the repository's present content (and, for
    embeddings, with the configured model); None when there is none."""
    candidates = RetrievalIndex.objects.filter(
        repository=repository, kind=kind, status=IndexStatus.READY, content_version=repository.content_version
    ).order_by("-version")
    for index in candidates:
        if kind == IndexKind.DENSE and index.backend != get_encoder().name:
            continue
        if kind == IndexKind.LEXICAL and index.backend != (
            "elasticsearch" if settings.ELASTICSEARCH_URL else "tantivy"
        ):
            continue
        return index
    return None


def lexical_backend_for(index: RetrievalIndex) -> LexicalBackend:
    # The data directory is part of the key: tests give every test its own.
    key = ("lexical", index.backend, index.name, str(settings.WELLCHOSEN_DATA_DIR))
    with _lock:
        if key not in _open:
            if index.backend == "elasticsearch":
                from retrieval.lexical.elasticsearch_backend import ElasticsearchBackend

                _open[key] = ElasticsearchBackend(index_name=index.name, url=settings.ELASTICSEARCH_URL)
            else:
                from retrieval.lexical.tantivy_backend import TantivyBackend

                _open[key] = TantivyBackend(index_name=index.name)
        return _open[key]


def dense_index_for(index: RetrievalIndex) -> DenseIndex:
    key = ("dense", index.name)
    with _lock:
        if key not in _open:
            folder = Path(index.name)
            _open[key] = DenseIndex(EmbeddingStore(folder / "store"), folder / "faiss.index")
        return _open[key]


def dataset_pool_counts(*, dataset) -> list[dict]:
    """Per repository the dataset's questions were pooled from: how many pools are done and how
    many failed (one aggregate query)."""
    from django.db.models import Count, Q

    from retrieval.models import PoolStatus, QuestionRetrieval

    return list(
        QuestionRetrieval.objects.filter(question__dataset=dataset)
        .values("repository__name")
        .annotate(
            done=Count("id", filter=Q(status=PoolStatus.DONE)), failed=Count("id", filter=Q(status=PoolStatus.FAILED))
        )
        .order_by("repository__name")
    )
