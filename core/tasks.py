"""The Celery tasks of core: one that runs any job by id, one that runs a shard of a sharded job,
and beat's sweep for stranded jobs and shards."""

from celery import shared_task

from core.services.job_shards import job_shard_execute, job_shards_requeue_stale
from core.services.jobs import job_execute, jobs_requeue_stale


@shared_task(acks_late=True)
def run_job(job_id: int) -> None:
    """Run the job with this id: its kind's handler, found in the registry (core.job_registry)."""
    job_execute(job_id=job_id)


@shared_task(acks_late=True)
def run_job_shard(job_id: int, number: int, stage: str = "") -> None:
    """Run a shard of a running sharded job (services.job_shards.job_shard_execute). ``stage``
    last, with a default: messages sent before stages existed name the job's one stage ("")."""
    job_shard_execute(job_id=job_id, number=number, stage=stage)


@shared_task
def jobs_requeue_stale_job() -> None:
    """Celery beat's periodic sweep (settings.CELERY_BEAT_SCHEDULE): a new message for each
    running job, and each running shard of one, whose worker died (services.jobs.jobs_requeue_stale,
    services.job_shards.job_shards_requeue_stale)."""
    jobs_requeue_stale()
    job_shards_requeue_stale()
