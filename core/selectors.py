"""Reads of background jobs."""

from collections.abc import Iterable
from typing import Any

from django.core.cache import cache
from django.db.models import Case, CharField, F, Q, QuerySet, Value, When, Window
from django.db.models.functions import RowNumber

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


def job_params_q(*, kinds: Iterable[str], key: str, value: Any) -> Q:
    """Jobs of ``kinds`` whose JSON parameters hold ``key: value`` (``dataset``: a dataset's name
    for most kinds, ``dataset_id`` for the quality refresh): a lookup on the stored JSON."""
    return Q(kind__in=list(kinds), **{f"params__{key}": value})


def jobs_for(*, match: Q, limit: int = 8) -> QuerySet:
    """The newest jobs that ``match`` (job_params_q, or a Q on the job ids another table records)."""
    if not match:  # an empty Q would match every job
        return Job.objects.none()
    return Job.objects.filter(match).select_related("created_by").order_by("-created_at", "-id")[:limit]


def jobs_latest_by(*, groups: dict[str, Q]) -> dict[str, Job]:
    """The newest job of each group (``{name: Q}``, e.g. a workspace step's kinds for one dataset):
    one query, whatever the number of groups or jobs. A job matching several groups counts for the
    first; a group without jobs is absent."""
    groups = {name: q for name, q in groups.items() if q}
    if not groups:
        return {}
    group = Case(*(When(q, then=Value(name)) for name, q in groups.items()), default=None, output_field=CharField())
    newest = Window(RowNumber(), partition_by=[F("group")], order_by=[F("created_at").desc(), F("id").desc()])
    jobs = Job.objects.annotate(group=group).filter(group__isnull=False).annotate(rank=newest).filter(rank=1)
    return {job.group: job for job in jobs}
