"""Celery beat's periodic tasks of the crowd app. Its jobs run through core.tasks.run_job."""

from celery import shared_task


@shared_task(acks_late=True)
def crowd_sync_due_job() -> None:
    """Celery beat's periodic crowd sync (settings.CELERY_BEAT_SCHEDULE): one sync job per
    published batch without one in flight."""
    from crowd.services.batches import crowd_sync_due

    crowd_sync_due()
