"""What each retrieval job kind runs: unpack the Job's params and call the service."""

from pathlib import Path

from annotation.models import Job
from annotation.services.errors import UserError
from annotation.services.jobs import JobProgress
from retrieval.models import Repository

from .indexing import embeddings_build, lexical_index_build
from .pools import PoolSettings, pools_build
from .repository_import import repository_import


def import_repository(job: Job, progress: JobProgress) -> dict:
    p = job.params
    return repository_import(
        path=Path(p["path"]),
        name=p["name"],
        fmt=p.get("format", "lines"),
        min_tokens=p.get("min_tokens", 1),
        exclude_datasets=p.get("exclude_datasets") or [],
        encoding=p.get("encoding", "utf-8"),
        progress=progress,
    )


def build_indexes(job: Job, progress: JobProgress) -> dict:
    repository = Repository.objects.filter(name=job.params["repository"]).first()
    if repository is None:
        raise UserError(f"no repository {job.params['repository']!r}")
    kinds = job.params.get("kinds") or ["lexical", "dense"]
    built = {}
    if "lexical" in kinds:
        index = lexical_index_build(repository=repository, progress=progress)
        built["lexical"] = {"name": index.name, "backend": index.backend, "utterances": index.utterance_count}
    if "dense" in kinds:
        index = embeddings_build(repository=repository, progress=progress)
        built["dense"] = {
            "name": index.name,
            "model": index.backend,
            "utterances": index.utterance_count,
            "faiss": index.params.get("faiss"),
        }
    return built


def build_pools(job: Job, progress: JobProgress) -> dict:
    p = job.params
    settings = PoolSettings(
        lexical=p.get("lexical", 5),
        dense=p.get("dense", 5),
        min_tokens=p.get("min_tokens", 3),
        paraphrase_threshold=p.get("paraphrase_threshold", 0.95),
    )
    return pools_build(
        dataset_name=p["dataset"],
        repository_name=p["repository"],
        settings=settings,
        exclude_datasets=p.get("exclude_datasets") or [],
        progress=progress,
        job_id=job.pk,
    )
