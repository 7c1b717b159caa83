"""Reads of background jobs."""

from django.core.cache import cache
from django.db.models import QuerySet

from core.models import Job, JobStatus, job_cache_key


def job_live_progress(*, job: Job) -> dict:
    """Progress as a worker last reported it: the cache while running (an import's own
    transaction hides its writes), the row otherwise."""
    values = {
        "progress": job.progress,
        "done_count": job.done_count,
        "total_count": job.total_count,
        "failed_count": job.failed_count,
        "phase": job.phase,
    }
    if job.status == JobStatus.RUNNING:
        values.update(cache.get(job_cache_key(job.pk, "progress")) or {})
    return values


def jobs_recent(*, limit: int = 50) -> QuerySet:
    return Job.objects.select_related("created_by").order_by("-created_at", "-id")[:limit]
