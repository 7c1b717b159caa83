"""Thin Celery tasks: load the job by id and run its service (see annotation.services.jobs)."""

from celery import shared_task

from annotation.services.jobs import job_execute
from evaluation.services.job_handlers import campaign, evaluate, generate


@shared_task(acks_late=True)
def evaluate_job(job_id: int) -> None:
    # Routed to settings.WELLCHOSEN_GPU_QUEUE; a worker without a GPU scores on its CPU.
    job_execute(job_id=job_id, handler=evaluate)


@shared_task(acks_late=True)
def generate_job(job_id: int) -> None:
    # Routed to settings.WELLCHOSEN_GPU_QUEUE; a worker without a GPU generates on its CPU.
    job_execute(job_id=job_id, handler=generate)


@shared_task(acks_late=True)
def campaign_job(job_id: int) -> None:
    # CHOSEN evaluations and RANDOM trials score with the systems: the gpu queue, like evaluate.
    job_execute(job_id=job_id, handler=campaign)
