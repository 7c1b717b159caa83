"""The Celery tasks of core: one that runs any job by id, and beat's sweep for stranded jobs."""

from celery import shared_task

from core.services.jobs import job_execute, jobs_requeue_stale


@shared_task(acks_late=True)
def run_job(job_id: int) -> None:
    """Run the job with this id: its kind's handler, found in the registry (core.job_registry)."""
    job_execute(job_id=job_id)


@shared_task
def jobs_requeue_stale_job() -> None:
    """Celery beat's periodic sweep (settings.CELERY_BEAT_SCHEDULE): a new message for each
    running job whose worker died (services.jobs.jobs_requeue_stale)."""
    jobs_requeue_stale()
