"""Running a job in the foreground from a management command, recorded like any other."""

import json
from collections.abc import Callable

from django.core.management.base import CommandError

from annotation.models import Job, JobStatus

from .jobs import JobProgress, job_create, job_execute


def job_run_here(*, kind: str, params: dict, handler: Callable[[Job, JobProgress], dict]) -> Job:
    """Create the job, run it in this process and return it; a failure becomes a CommandError."""
    return job_execute_here(job=job_create(kind=kind, params=params, enqueue=False), handler=handler)


def job_execute_here(*, job: Job, handler: Callable[[Job, JobProgress], dict]) -> Job:
    """Run an existing job in this process and return it, refreshed; a failure becomes a CommandError."""
    job_execute(job_id=job.pk, handler=handler)
    job.refresh_from_db()
    if job.status != JobStatus.SUCCEEDED:
        raise CommandError(f"job #{job.pk} {job.status}: {job.error}")
    return job


def format_report(result: dict) -> str:
    return json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False)
