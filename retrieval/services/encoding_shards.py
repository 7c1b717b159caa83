"""The dense encoding of a repository in shards (build_indexes): blocks of consecutive utterance
ids that any worker encodes (core.services.job_shards), then the store completed and the search
index built on the job's worker.

The job's worker begins the version: it allocates the embedding store at its full size (every
row empty; ``store.store_allocate``), creates the cluster index where Elasticsearch kNN is
configured, and records on the version what a shard needs (model path and encoder backend, dtype,
the store's size). Each shard then encodes its block in chunks of the size the plan recorded,
writes the rows at its block's fixed offset in the store (``store.StoreBlockWriter``) and, with
Elasticsearch, bulk-loads the same vectors. A shard's rows are committed when the shard has
flushed them and its row says succeeded (only the attempt that claimed it may say so): a shard
taken over is encoded again whole, rows and documents overwritten in place, and the shards already
done are not. Once every shard has succeeded, the job's worker checks that every row was written
(ids ascending), writes the store's ``meta.json`` and builds the FAISS index (or refreshes the
cluster index) as a build in one piece does.

The blocks hold whole chunks of the encoder (the plan rounds the shard size up), so the shards
encode exactly the chunks of a build in one piece: same texts in each call, same batches, same
vectors to the bit on the same machine and encoder; the store's bytes are those of
``indexing.embeddings_build``.

A job taken over while its shards exist goes on with the version its shards write (it is still
"building", recorded with the job); one taken over before its shards were planned begins a new
version, and the interrupted one is marked failed as any interrupted build. A failed job is the
same: its version stays "building", the blocks of its finished shards on disk, and a retry of the
job (core.services.job_retries) goes on with it, encoding only the shards that had not succeeded.
Only a cancel gives the version up at once (marked failed, files deleted); a failed job's version
that is never retried is given up by the repository's next dense version (``_new_version``: its
job has ended), and a retry that finds its version given up so encodes anew, under a new version.

The shards are the job's stage "encoding" (``ENCODING_STAGE``), whichever kind the job is: the
index job, or the pool job encoding a missing dense index before its questions' shards; each kind
registers ``encoding_shard`` (retrieval.services.job_handlers) as that stage's shard handler.
"""

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from django.conf import settings

from annotation.models import Repository, Utterance
from core.errors import JobCancelled, UserError
from core.models import Job, JobShard
from core.services.job_shards import ShardProgress, ShardSpec, job_shards_run
from core.services.jobs import JobProgress
from retrieval.dense.backends import STORE_FOLDER, DenseBackend, dense_backend
from retrieval.dense.encoder import Encoder, get_encoder
from retrieval.dense.store import EmbeddingStore, StoreBlockWriter, store_allocate, store_complete
from retrieval.models import IndexStatus, RetrievalIndex

from .indexing import _delete_files, _failed, _ready, _snapshot, dense_version_new

logger = logging.getLogger(__name__)

# The stage of a job's shards that encode utterances (core.models.JobShard.stage).
ENCODING_STAGE = "encoding"


def encoding_chunking(*, encoder_chunk: int, size: int) -> tuple[int, int]:
    """(shard size, chunk): ``size`` rounded up to whole chunks of the encoder; a size below the
    encoder's chunk is the chunk."""
    chunk = max(1, min(encoder_chunk, size))
    return -(-size // chunk) * chunk, chunk


def encoding_shards_plan(*, index: RetrievalIndex, size: int, chunk: int) -> list[ShardSpec]:
    """Shards of ``size`` utterances each, by id, up to the version's snapshot: each with its first
    and last id, its rows in the store (offset, count) and the chunk it encodes at a time.

    A block's last id is read with an OFFSET in the (repository, id) index: the database skips the
    block's ids, Python sees two per block (every id through Python: about 1 µs each, minutes for
    hundreds of millions)."""
    top, total = index.params["top_utterance_id"], index.params["count"]
    ids = (
        Utterance.objects.filter(repository_id=index.repository_id, id__lte=top)
        .order_by("id")
        .values_list("id", flat=True)
    )
    specs, offset, first = [], 0, ids.first()
    while first is not None:
        count = min(size, total - offset)
        last = ids.filter(id__gte=first)[count - 1 : count].first() if count > 0 else None
        if last is None:
            raise UserError(f"the repository holds fewer utterances up to id {top} than the {total} counted")
        specs.append(_spec(index, first, last, offset=offset, count=count, chunk=chunk))
        offset += count
        first = ids.filter(id__gt=last).first()
    if offset != total:
        raise UserError(f"the repository holds {offset} utterances up to id {top}, not the {total} counted")
    return specs


def _spec(index: RetrievalIndex, first: int, last: int, *, offset: int, count: int, chunk: int) -> ShardSpec:
    params = {"index": index.pk, "first_id": first, "last_id": last, "offset": offset, "count": count, "chunk": chunk}
    return ShardSpec(params, total=count)


def embeddings_build_sharded(
    *,
    repository: Repository,
    job: Job,
    progress: JobProgress,
    model_path: str | None = None,
    backend: str | None = None,
    dtype: str | None = None,
) -> RetrievalIndex:
    """A new embedding version of the repository, encoded in shards of
    ``WELLCHOSEN_ENCODING_SHARD_SIZE`` utterances by this worker and any other on the job's queue."""
    encoder = get_encoder(model_path=model_path, backend=backend)
    index = _version_resumed(job=job)
    if index is not None and index.status == IndexStatus.READY:
        return index  # a takeover after the version was ready, before the job ended
    index = index or _version_begin(repository=repository, job=job, encoder=encoder, dtype=dtype)
    folder = Path(index.name)
    size, chunk = encoding_chunking(encoder_chunk=encoder.chunk, size=settings.WELLCHOSEN_ENCODING_SHARD_SIZE)
    try:
        job_shards_run(
            job=job,
            progress=progress,
            plan=lambda: encoding_shards_plan(index=index, size=size, chunk=chunk),
            phase="encoding utterances",
            unit="utterances",
            stage=ENCODING_STAGE,
        )
        progress.update(done=0, total=0, force=True, phase="building the vector index", unit="")
        store_folder = folder / STORE_FOLDER
        # A takeover after the store was completed finds it complete.
        store = EmbeddingStore(store_folder) if EmbeddingStore.exists(store_folder) else store_complete(store_folder)
        search_params = _search_attached(index).finish(store)
    except JobCancelled as exc:
        _delete_files(index)
        _failed(index, exc)
        raise
    # Any other failure leaves the version building, its finished shards' rows written, for a retry
    # of the job or an attempt that takes it over (see the module's docstring).
    _ready(index, count=store.meta.count, params=search_params)
    return index


def _version_resumed(*, job: Job) -> RetrievalIndex | None:
    """The version whose encoding shards this job planned (a job taken over or retried goes on
    with it, or ends with it once ready), if any. A version given up since (a later version of the
    repository marked it failed while this job stood failed) takes its shards with it: the job then
    begins a new version and plans anew."""
    shards = JobShard.objects.filter(job=job, stage=ENCODING_STAGE).order_by("number")
    planned = shards.values_list("params", flat=True).first()
    if planned is None:
        return None
    index = RetrievalIndex.objects.filter(pk=planned["index"]).first()
    if index is None or index.status not in (IndexStatus.BUILDING, IndexStatus.READY):
        logger.warning("job %s: the version its encoding shards wrote was given up; it encodes anew", job.pk)
        shards.delete()
        return None
    logger.info("job %s: goes on with the encoding of %s", job.pk, index.name)
    return index


def _version_begin(*, repository: Repository, job: Job, encoder: Encoder, dtype: str | None) -> RetrievalIndex:
    """A new version, its store allocated and its search index begun, with what every shard reads."""
    dtype = dtype or settings.WELLCHOSEN_EMBEDDING_DTYPE
    index, search = dense_version_new(repository=repository, encoder_name=encoder.name, job_id=job.pk)
    folder = Path(index.name)
    top, total = _snapshot(repository)
    try:
        search.delete(folder=folder, params=index.params)  # debris of a crashed build of this very version
        if folder.exists():
            shutil.rmtree(folder)
        store_allocate(folder / STORE_FOLDER, count=total, dim=encoder.dim, dtype=dtype, model=encoder.name)
        built = search(folder=folder, dim=encoder.dim, count=total)
    except BaseException as exc:
        _delete_files(index)
        _failed(index, exc)
        raise
    index.params = {
        **index.params,
        "model": encoder.name,
        "model_path": encoder.model_path,
        "encoder_backend": encoder.backend,
        "dim": encoder.dim,
        "dtype": dtype,
        "top_utterance_id": top,
        "count": total,
        **built.shared_params(),
    }
    index.save(update_fields=["params"])
    return index


def encoding_shard_run(
    *,
    index_id: int,
    first_id: int,
    last_id: int,
    offset: int,
    count: int,
    chunk: int,
    progress: ShardProgress,
) -> dict:
    """Encode one shard's utterances and write them at its rows of the store (and to the cluster
    index); a shard run again overwrites the same rows. ``progress``: the shard's (a report
    stops it once another attempt took the shard over, before it writes anything more)."""
    index = RetrievalIndex.objects.get(pk=index_id)
    params = index.params
    encoder = get_encoder(model_path=params["model_path"], backend=params["encoder_backend"])
    if encoder.name != params["model"]:
        raise UserError(f"this worker's encoder is {encoder.name}, the version's {params['model']}")
    folder = Path(index.name)
    block = StoreBlockWriter(folder / STORE_FOLDER, offset=offset, count=count)
    built = _search_attached(index)
    progress.update(done=0, total=count, force=True, phase="encoding utterances", unit="utterances")

    def write(ids: list[int], texts: list[str]) -> None:
        vectors = encoder.encode(texts)
        progress.update(done=block.written, total=count, force=True)  # ShardLost before writing, if taken over
        block.append(np.asarray(ids, dtype=np.int64), vectors)
        built.add(np.asarray(ids, dtype=np.int64), vectors)

    ids, texts = [], []
    for utterance_id, text in _block_rows(index.repository_id, first_id, last_id):
        ids.append(utterance_id)
        texts.append(text)
        if len(ids) == chunk:
            write(ids, texts)
            ids, texts = [], []
    if ids:
        write(ids, texts)
    block.flush()  # refuses a block that is not whole
    progress.update(done=block.written, total=count, force=True)
    return {"utterances": count, "first_id": first_id, "last_id": last_id}


def _search_attached(index: RetrievalIndex) -> DenseBackend:
    """The version's search index, begun on the job's worker, as this process continues it."""
    params = index.params
    return dense_backend(params["search"]).attach(
        folder=Path(index.name), dim=params["dim"], count=params["count"], params=params
    )


def _block_rows(repository_id: int, first_id: int, last_id: int) -> Iterator[tuple[int, str]]:
    return (
        Utterance.objects.filter(repository_id=repository_id, id__gte=first_id, id__lte=last_id)
        .order_by("id")
        .values_list("id", "text")
        .iterator(chunk_size=20000)
    )
