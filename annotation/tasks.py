"""Thin Celery tasks: load the job by id and run its service (see services.jobs.job_execute)."""

from celery import shared_task

from annotation.models import JobKind
from annotation.services.job_handlers import HANDLERS
from annotation.services.jobs import job_execute, jobs_requeue_stale


@shared_task(acks_late=True)
def import_dialogues_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=HANDLERS[JobKind.IMPORT_DIALOGUES])


@shared_task(acks_late=True)
def import_testset_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=HANDLERS[JobKind.IMPORT_TESTSET])


@shared_task(acks_late=True)
def import_scores_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=HANDLERS[JobKind.IMPORT_SCORES])


@shared_task(acks_late=True)
def build_testset_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=HANDLERS[JobKind.BUILD_TESTSET])


@shared_task(acks_late=True)
def quality_refresh_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=HANDLERS[JobKind.QUALITY_REFRESH])


@shared_task(acks_late=True)
def crowd_publish_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=HANDLERS[JobKind.CROWD_PUBLISH])


@shared_task(acks_late=True)
def crowd_sync_job(job_id: int) -> None:
    job_execute(job_id=job_id, handler=HANDLERS[JobKind.CROWD_SYNC])


@shared_task(acks_late=True)
def crowd_sync_due_job() -> None:
    """Celery beat's periodic crowd sync (settings.CELERY_BEAT_SCHEDULE): one sync job per
    published batch without one in flight."""
    from annotation.crowd.services import crowd_sync_due

    crowd_sync_due()


@shared_task
def jobs_requeue_stale_job() -> None:
    """Celery beat's periodic sweep (settings.CELERY_BEAT_SCHEDULE): a new message for each
    running job whose worker died (services.jobs.jobs_requeue_stale)."""
    jobs_requeue_stale()
