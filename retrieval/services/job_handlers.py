"""What each retrieval job kind runs: its typed parameters handed to the service."""

from pathlib import Path

from annotation.models import Repository
from core.errors import UserError
from core.models import Job
from core.services.jobs import JobProgress
from retrieval.job_params import BuildIndexesParams, BuildPoolsParams, ImportRepositoryParams

from .indexing import embeddings_build, lexical_index_build
from .pools import PoolSettings, pools_build
from .repository_import import repository_import


def import_repository(params: ImportRepositoryParams, job: Job, progress: JobProgress) -> dict:
    return repository_import(
        path=Path(params.path),
        name=params.name,
        fmt=params.format,
        min_tokens=params.min_tokens,
        exclude_datasets=params.exclude_datasets,
        encoding=params.encoding,
        progress=progress,
    )


def build_indexes(params: BuildIndexesParams, job: Job, progress: JobProgress) -> dict:
    repository = Repository.objects.filter(name=params.repository).first()
    if repository is None:
        raise UserError(f"no repository {params.repository!r}")
    built = {}
    if "lexical" in params.kinds:
        index = lexical_index_build(repository=repository, progress=progress, job_id=job.pk)
        built["lexical"] = {"name": index.name, "backend": index.backend, "utterances": index.utterance_count}
    if "dense" in params.kinds:
        index = embeddings_build(repository=repository, progress=progress, job_id=job.pk)
        built["dense"] = {
            "name": index.name,
            "model": index.backend,
            "utterances": index.utterance_count,
            "search": index.params.get("search"),
            "faiss": index.params.get("faiss"),
            "es_index": index.params.get("es_index"),
        }
    return built


def build_pools(params: BuildPoolsParams, job: Job, progress: JobProgress) -> dict:
    settings = PoolSettings(
        lexical=params.lexical,
        dense=params.dense,
        min_tokens=params.min_tokens,
        paraphrase_threshold=params.paraphrase_threshold,
    )
    return pools_build(
        dataset_name=params.dataset,
        repository_name=params.repository,
        settings=settings,
        exclude_datasets=params.exclude_datasets,
        progress=progress,
        job_id=job.pk,
    )


HANDLERS = {
    ImportRepositoryParams: import_repository,
    BuildIndexesParams: build_indexes,
    BuildPoolsParams: build_pools,
}
