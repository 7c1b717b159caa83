"""Helpers for management commands: run a job in the foreground, recorded like any other."""

import json

from django.core.management.base import CommandError

from core.job_registry import JobParams
from core.models import Job, JobStatus
from core.services.jobs import job_create, job_execute


def job_run_here(*, params: JobParams) -> Job:
    """Create the job, run it in this process and return it; a failure becomes a CommandError."""
    return job_execute_here(job=job_create(params=params, enqueue=False))


def job_execute_here(*, job: Job) -> Job:
    """Run an existing job in this process and return it, refreshed; a failure becomes a CommandError."""
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    if job.status != JobStatus.SUCCEEDED:
        raise CommandError(f"job #{job.pk} {job.status}: {job.error}")
    return job


def format_report(result: dict) -> str:
    return json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False)
