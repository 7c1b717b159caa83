"""What each retrieval job kind runs: its typed parameters handed to the service."""

from pathlib import Path

from django.conf import settings

from annotation.models import Repository
from core.errors import UserError
from core.models import Job, JobShard
from core.services.job_shards import ShardProgress, job_shards_run
from core.services.jobs import JobProgress
from retrieval.job_params import BuildIndexesParams, BuildPoolsParams, ImportRepositoryParams
from retrieval.models import IndexKind, RetrievalIndex
from retrieval.selectors import index_current

from .encoding_shards import ENCODING_STAGE, embeddings_build_sharded, encoding_shard_run
from .indexing import lexical_index_build
from .pool_shards import pool_reports_merge, pool_shards_plan
from .pool_targets import pools_target_get
from .pools import PoolSettings, pools_build_questions, pools_prepare
from .repository_import import repository_import


def import_repository(params: ImportRepositoryParams, job: Job, progress: JobProgress) -> dict:
    return repository_import(
        path=Path(params.path),
        name=params.name,
        fmt=params.format,
        min_tokens=params.min_tokens,
        exclude_datasets=params.exclude_datasets,
        encoding=params.encoding,
        normaliser=params.normaliser,
        progress=progress,
    )


def build_indexes(params: BuildIndexesParams, job: Job, progress: JobProgress) -> dict:
    repository = Repository.objects.filter(name=params.repository).first()
    if repository is None:
        raise UserError(f"no repository {params.repository!r}")
    built = {}
    if "lexical" in params.kinds:
        # A retried (or taken over) job keeps the lexical version it built while that is current.
        index = index_current(repository=repository, kind=IndexKind.LEXICAL)
        if index is None or index.job_id != job.pk:
            index = lexical_index_build(repository=repository, progress=progress, job_id=job.pk)
        built["lexical"] = {"name": index.name, "backend": index.backend, "utterances": index.utterance_count}
    if "dense" in params.kinds:
        index = embeddings_build_sharded(repository=repository, job=job, progress=progress)
        built["dense"] = {
            "name": index.name,
            "model": index.backend,
            "utterances": index.utterance_count,
            "search": index.params.get("search"),
            "faiss": index.params.get("faiss"),
            "es_index": index.params.get("es_index"),
        }
    return built


def encoding_shard(
    params: BuildIndexesParams | BuildPoolsParams, job: Job, shard: JobShard, progress: ShardProgress
) -> dict:
    """One block of the repository's utterances, encoded into the version the job began (the
    stage "encoding" of the index job, and of the pool job whose dense index was missing)."""
    p = shard.params
    return encoding_shard_run(
        index_id=p["index"],
        first_id=p["first_id"],
        last_id=p["last_id"],
        offset=p["offset"],
        count=p["count"],
        chunk=p["chunk"],
        progress=progress,
    )


def build_pools(params: BuildPoolsParams, job: Job, progress: JobProgress) -> dict:
    """The indexes (a missing dense index encoded in shards of the stage "encoding" that any
    worker may run: encoding_shard), then the questions in shards of the stage "" (build_pools_shard)."""
    pool_settings = _pool_settings(params)

    def encode_in_shards(repository: Repository) -> RetrievalIndex:
        return embeddings_build_sharded(repository=repository, job=job, progress=progress)

    target = pools_prepare(
        dataset_name=params.dataset,
        repository_name=params.repository,
        settings=pool_settings,
        progress=progress,
        job_id=job.pk,
        dense_build=encode_in_shards,
    )
    reports = job_shards_run(
        job=job,
        progress=progress,
        plan=lambda: pool_shards_plan(target=target, size=settings.WELLCHOSEN_JOB_SHARD_SIZE),
        phase="retrieving candidates",
        unit="questions",
    )
    if not reports:  # a dataset without questions
        return pools_build_questions(target=target, settings=pool_settings, progress=progress, job_id=job.pk)
    return pool_reports_merge(reports)


def build_pools_shard(params: BuildPoolsParams, job: Job, shard: JobShard, progress: ShardProgress) -> dict:
    """One block of the pool job's questions, with the indexes the job prepared."""
    target = pools_target_get(
        dataset_name=params.dataset,
        repository_name=params.repository,
        lexical_index_id=shard.params["lexical_index"],
        dense_index_id=shard.params["dense_index"],
    )
    return pools_build_questions(
        target=target,
        settings=_pool_settings(params),
        exclude_datasets=params.exclude_datasets,
        first_id=shard.params["first_id"],
        last_id=shard.params["last_id"],
        progress=progress,
        job_id=job.pk,
    )


def _pool_settings(params: BuildPoolsParams) -> PoolSettings:
    return PoolSettings(
        lexical=params.lexical,
        dense=params.dense,
        min_tokens=params.min_tokens,
        paraphrase_threshold=params.paraphrase_threshold,
        match_surface=params.match_surface,
    )


HANDLERS = {
    ImportRepositoryParams: import_repository,
    BuildIndexesParams: build_indexes,
    BuildPoolsParams: build_pools,
}
# Kinds whose handler splits the work into shards (core.services.job_shards): each stage's shard work.
SHARD_HANDLERS = {
    BuildIndexesParams: {ENCODING_STAGE: encoding_shard},
    BuildPoolsParams: {ENCODING_STAGE: encoding_shard, "": build_pools_shard},
}
