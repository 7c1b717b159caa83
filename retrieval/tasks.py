"""Thin Celery tasks: load the job by id and run its service (see annotation.services.jobs)."""

from celery import shared_task

from annotation.services.jobs import job_execute
from retrieval.services import job_handlers


@shared_task(acks_late=True)
def import_repository_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=job_handlers.import_repository)


@shared_task(acks_late=True)
def build_indexes_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=job_handlers.build_indexes)


@shared_task(acks_late=True)
def build_pools_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=job_handlers.build_pools)
