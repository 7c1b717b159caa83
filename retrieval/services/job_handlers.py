from pathlib import Path

from annotation.models import Job
from annotation.services.jobs import JobProgress

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
