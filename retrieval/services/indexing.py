"""Building the search indexes of a repository: BM25 (tantivy or Elasticsearch) and embeddings
(memory-mapped store + FAISS or Elasticsearch kNN). Each build is a new version; an index is
stale once the repository's content changed after it was built."""

import logging
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from annotation.models import Repository, Utterance
from core.models import Job
from core.services.jobs import JobProgress
from retrieval.dense.backends import STORE_FOLDER, DenseBackend, dense_backend
from retrieval.dense.encoder import get_encoder
from retrieval.dense.store import EmbeddingStoreWriter
from retrieval.lexical.base import LexicalBackend
from retrieval.models import IndexKind, IndexStatus, RetrievalIndex
from retrieval.selectors import index_current, lexical_backend_for

logger = logging.getLogger(__name__)
_KEEP_OLD_VERSIONS = 1  # a pool job may still read the previous version


def indexes_ensure(
    *,
    repository: Repository,
    progress: JobProgress | None = None,
    job_id: int | None = None,
    dense_build: Callable[[Repository], RetrievalIndex] | None = None,
) -> tuple[RetrievalIndex, RetrievalIndex]:
    """The current lexical and dense indexes of the repository, building whichever is missing or
    stale. ``dense_build``: how a missing dense index is built (a job encodes it in shards:
    encoding_shards.embeddings_build_sharded); by default in one piece here."""
    lexical = index_current(repository=repository, kind=IndexKind.LEXICAL)
    if lexical is None:
        lexical = lexical_index_build(repository=repository, progress=progress, job_id=job_id)
    dense = index_current(repository=repository, kind=IndexKind.DENSE)
    if dense is None and dense_build is not None:
        dense = dense_build(repository)
    elif dense is None:
        dense = embeddings_build(repository=repository, progress=progress, job_id=job_id)
    return lexical, dense


def _new_version(*, repository: Repository, kind: str, backend: str, name_for, job_id: int | None) -> RetrievalIndex:
    """A new version in status building, recorded with the job that builds it (``job_id``)."""
    with transaction.atomic():
        repo = Repository.objects.select_for_update().get(pk=repository.pk)
        interrupted = _interrupted_builds_fail(repository=repo, kind=kind, job_id=job_id)
        version = (RetrievalIndex.objects.filter(repository=repo, kind=kind).aggregate(v=Max("version"))["v"] or 0) + 1
        index = RetrievalIndex.objects.create(
            repository=repo,
            kind=kind,
            version=version,
            backend=backend,
            name=name_for(repo, version),
            content_version=repo.content_version,
            job_id=job_id,
        )
    for stale in interrupted:
        _delete_files(stale)
    return index


def _interrupted_builds_fail(*, repository: Repository, kind: str, job_id: int | None) -> list[RetrievalIndex]:
    """Mark failed the versions still "building" whose builder is dead: an earlier attempt of job
    ``job_id`` (this attempt took the job over from it) or a job that has ended. Returns them.

    A worker killed mid-build (out of memory, a lost machine) runs no clean-up: without this its
    version would say "building" for ever. Builds without a job, or of a job still running
    elsewhere, are left alone."""
    dead = Q(job__status__in=Job.FINISHED)
    if job_id is not None:
        dead |= Q(job_id=job_id)
    interrupted = list(
        RetrievalIndex.objects.filter(repository=repository, kind=kind, status=IndexStatus.BUILDING).filter(dead)
    )
    RetrievalIndex.objects.filter(pk__in=[i.pk for i in interrupted]).update(
        status=IndexStatus.FAILED, error="interrupted: the worker building it stopped before it was ready"
    )
    if interrupted:
        logger.warning("%s index versions %s: their builds were interrupted", kind, [i.version for i in interrupted])
    return interrupted


def _snapshot(repository: Repository) -> tuple[int, int]:
    """(highest utterance id, count up to it): imports only add rows, so this fixes what a build reads."""
    top = Utterance.objects.filter(repository=repository).aggregate(m=Max("id"))["m"] or 0
    return top, Utterance.objects.filter(repository=repository, id__lte=top).count()


def _rows(repository: Repository, top: int) -> Iterator[tuple[int, str]]:
    return (
        Utterance.objects.filter(repository=repository, id__lte=top)
        .order_by("id")
        .values_list("id", "text")
        .iterator(chunk_size=20000)
    )


def index_slug(repository: Repository) -> str:
    """The repository's part of its index names, which Elasticsearch wants lowercase (BM25 and kNN
    indexes). A repository name (a slug) with capitals is lowered and keeps its id after a dot, a
    character no slug has, so that "Subs" and "subs" never share an index."""
    name = repository.name.lower()
    return name if name == repository.name else f"{name}.{repository.pk}"


def lexical_index_name(repository: Repository, version: int) -> str:
    """The BM25 index's name, also its Elasticsearch index name."""
    return f"wellchosen-{index_slug(repository)}-v{version}"


def dense_index_folder(repository: Repository, version: int) -> str:
    """The dense index version's folder, whose name the Elasticsearch kNN index name extends."""
    return str(Path(settings.WELLCHOSEN_DATA_DIR) / "embeddings" / f"{index_slug(repository)}-v{version}")


def dense_version_new(
    *, repository: Repository, encoder_name: str, job_id: int | None
) -> tuple[RetrievalIndex, type[DenseBackend]]:
    """A new dense version in status building (see _new_version) and its search backend, recorded
    on it at once so that the files of a build interrupted from here on can be found and deleted."""
    search = dense_backend()
    index = _new_version(
        repository=repository, kind=IndexKind.DENSE, backend=encoder_name, name_for=dense_index_folder, job_id=job_id
    )
    index.params = {**index.params, "search": search.name}
    index.save(update_fields=["params"])
    return index, search


def lexical_index_build(
    *, repository: Repository, progress: JobProgress | None = None, job_id: int | None = None
) -> RetrievalIndex:
    """A new BM25 version of the repository; ``job_id``: the job building it (see _new_version)."""
    backend_kind = "elasticsearch" if settings.ELASTICSEARCH_URL else "tantivy"
    index = _new_version(
        repository=repository,
        kind=IndexKind.LEXICAL,
        backend=backend_kind,
        name_for=lexical_index_name,
        job_id=job_id,
    )
    top, total = _snapshot(repository)
    backend: LexicalBackend = lexical_backend_for(index)

    def report(n: int) -> None:
        if progress:
            progress.update(done=n, total=total, force=True, phase="building the lexical index", unit="utterances")

    report(0)

    try:
        count = backend.build(_rows(repository, top), on_progress=report)
    except BaseException as exc:
        _failed(index, exc)
        raise
    _ready(index, count=count, params={"top_utterance_id": top})
    return index


def embeddings_build(
    *,
    repository: Repository,
    progress: JobProgress | None = None,
    model_path: str | None = None,
    backend: str | None = None,
    dtype: str | None = None,
    job_id: int | None = None,
) -> RetrievalIndex:
    """A new embedding version of the repository; ``job_id``: the job building it (see _new_version)."""
    encoder = get_encoder(model_path=model_path, backend=backend)
    dtype = dtype or settings.WELLCHOSEN_EMBEDDING_DTYPE
    index, search = dense_version_new(repository=repository, encoder_name=encoder.name, job_id=job_id)
    folder = Path(index.name)
    top, total = _snapshot(repository)
    try:
        # Debris of a crashed build of this very version (files, a cluster index) goes first.
        search.delete(folder=folder, params=index.params)
        if folder.exists():
            shutil.rmtree(folder)
        writer = EmbeddingStoreWriter(
            folder / STORE_FOLDER, count=total, dim=encoder.dim, dtype=dtype, model=encoder.name
        )
        built = search(folder=folder, dim=encoder.dim, count=total)
        ids, texts = [], []
        if progress:
            progress.update(done=0, total=total, force=True, phase="encoding utterances", unit="utterances")
        for utterance_id, text in _rows(repository, top):
            ids.append(utterance_id)
            texts.append(text)
            if len(ids) == encoder.chunk:
                _encoded_add(np.asarray(ids, dtype=np.int64), encoder.encode(texts), writer, built)
                ids, texts = [], []
                if progress:
                    progress.update(done=writer.written, total=total)
        if ids:
            _encoded_add(np.asarray(ids, dtype=np.int64), encoder.encode(texts), writer, built)
        store = writer.close()
        if progress:
            progress.update(done=writer.written, total=total, force=True)
            progress.update(done=0, total=0, force=True, phase="building the vector index", unit="")
        search_params = built.finish(store)
    except BaseException as exc:
        _delete_files(index)
        _failed(index, exc)
        raise
    _ready(
        index,
        count=total,
        params={
            "model": encoder.name,
            "model_path": encoder.model_path,
            "dim": encoder.dim,
            "dtype": dtype,
            "top_utterance_id": top,
            **search_params,
        },
    )
    return index


def _encoded_add(ids: np.ndarray, vectors: np.ndarray, writer: EmbeddingStoreWriter, built: DenseBackend) -> None:
    writer.append(ids, vectors)
    built.add(ids, vectors)


def _ready(index: RetrievalIndex, *, count: int, params: dict) -> None:
    index.status, index.utterance_count, index.built_at = IndexStatus.READY, count, timezone.now()
    index.params = {**index.params, **params}
    index.save(update_fields=["status", "utterance_count", "built_at", "params"])
    _delete_old_versions(index)


def _failed(index: RetrievalIndex, exc: BaseException) -> None:
    RetrievalIndex.objects.filter(pk=index.pk).update(status=IndexStatus.FAILED, error=f"{type(exc).__name__}: {exc}")


def _delete_old_versions(index: RetrievalIndex) -> None:
    """Remove the files of versions older than the one before ``index`` (their rows stay as history)."""
    old = RetrievalIndex.objects.filter(
        repository_id=index.repository_id, kind=index.kind, version__lt=index.version - _KEEP_OLD_VERSIONS
    ).exclude(status=IndexStatus.FAILED)
    for stale in old:
        _delete_files(stale)


def _delete_files(index: RetrievalIndex) -> None:
    try:
        if index.kind == IndexKind.LEXICAL:
            lexical_backend_for(index).delete()
        else:
            if "search" in index.params:  # versions built before the dense backends kept all in the folder
                dense_backend(index.params["search"]).delete(folder=Path(index.name), params=index.params)
            shutil.rmtree(index.name, ignore_errors=True)
    except Exception:  # an unreachable cluster must not fail the new build
        logger.exception("could not delete index %s", index.name)
