from celery import shared_task

from annotation.services.jobs import job_execute
from retrieval.services.job_handlers import import_repository


@shared_task(acks_late=True)
def import_repository_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=import_repository)
