"""Reads of background jobs."""

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Case, CharField, F, Q, QuerySet, Value, When, Window
from django.db.models.functions import RowNumber
from django.urls import NoReverseMatch
from django.utils import timezone

from core import readable
from core.errors import UserError
from core.job_registry import job_kind_get, job_kind_is_registered, job_kind_label, job_kind_queue, job_kinds_all
from core.models import Job, JobShard, JobShardStatus, JobStatus, job_cache_key, job_shard_cache_key

logger = logging.getLogger(__name__)


def job_live_progress(*, job: Job, now: float | None = None) -> dict:
    """Progress as a worker last reported it: the cache while running (an import's own
    transaction hides its writes), the row otherwise; with the phases seen (each with readable
    counts and duration) and the running phase's ETA (``eta_seconds``, None when unknown)."""
    values = {
        "progress": job.progress,
        "done_count": job.done_count,
        "total_count": job.total_count,
        "failed_count": job.failed_count,
        "phase": job.phase,
        "phases": job.phases or [],
    }
    if job.status == JobStatus.RUNNING:
        values.update(cache.get(job_cache_key(job.pk, "progress")) or {})
    if not values["phases"] and (values["done_count"] or values["total_count"]):
        # A row written before phases were recorded: its counts are its one phase.
        started = job.started_at.timestamp() if job.started_at and job.status == JobStatus.RUNNING else None
        values["phases"] = [
            {
                "name": values["phase"],
                "done": values["done_count"],
                "total": values["total_count"],
                "failed": values["failed_count"],
                "started": started,
            }
        ]
    now = time.time() if now is None else now
    phases = [_phase_view(p, now=now, running=job.status == JobStatus.RUNNING) for p in values["phases"]]
    current = phases[-1] if phases and phases[-1]["running"] else None
    values["phases"] = phases
    values["unit"] = current["unit"] if current else (phases[-1]["unit"] if phases else "")
    values["eta_seconds"] = current["eta_seconds"] if current else None
    values["eta"] = readable.duration(values["eta_seconds"]) if values["eta_seconds"] is not None else ""
    took = job.finished_at - job.started_at if job.started_at and job.finished_at else None
    values["took_seconds"] = took.total_seconds() if took is not None else None
    # how long a running job has run so far (from its start: a retried job from its latest start)
    running = job.status == JobStatus.RUNNING and job.started_at is not None
    values["running_seconds"] = max(0.0, now - job.started_at.timestamp()) if running else None
    values["running"] = readable.duration(values["running_seconds"]) if running else ""
    return values


def job_shards_live(*, job_id: int, stage: str | None = None) -> list[dict]:
    """Each shard of a sharded job (none for another job), of ``stage`` or with None of every
    stage, in the order they were planned, as its worker last reported it: the cache while it runs
    (a report inside a transaction reaches only the cache), the row otherwise. Keys: stage,
    number, status, attempts, worker, done, total, failed, error and ``counts_text`` ("310 of 1,000")."""
    shards_of_job = JobShard.objects.filter(job_id=job_id)
    if stage is not None:
        shards_of_job = shards_of_job.filter(stage=stage)
    rows = list(
        shards_of_job.order_by("id").values(
            "stage", "number", "status", "attempts", "worker", "done_count", "total_count", "failed_count", "error"
        )
    )
    keys = {
        (r["stage"], r["number"]): job_shard_cache_key(job_id, r["number"], "progress", stage=r["stage"])
        for r in rows
        if r["status"] == JobShardStatus.RUNNING
    }
    live = cache.get_many(list(keys.values())) if keys else {}
    shards = []
    for row in rows:
        counts = {**row, **(live.get(keys.get((row["stage"], row["number"]), ""), {}))}
        shards.append(
            {
                "stage": row["stage"],
                "number": row["number"],
                "status": row["status"],
                "attempts": row["attempts"],
                "worker": row["worker"],
                "done": counts["done_count"],
                "total": counts["total_count"],
                "failed": counts["failed_count"],
                "error": row["error"],
                "counts_text": f"{readable.count(counts['done_count'])} of {readable.count(counts['total_count'])}",
            }
        )
    return shards


def job_shards_totals(shards: list[dict]) -> tuple[int, int, int]:
    """The done, total and failed counts of these shards (one stage's: the job's progress in that
    stage), summed (a succeeded shard counts whole)."""
    done = sum(s["total"] if s["status"] == JobShardStatus.SUCCEEDED else s["done"] for s in shards)
    return done, sum(s["total"] for s in shards), sum(s["failed"] for s in shards)


def _phase_view(phase: dict, *, now: float, running: bool) -> dict:
    done, total, unit = phase.get("done", 0), phase.get("total", 0), phase.get("unit", "")
    started = phase.get("started")
    is_running = running and started is not None
    seconds = now - started if is_running else phase.get("seconds")
    eta = phase_eta(done=done, total=total, elapsed=seconds) if is_running else None
    estimated = bool(phase.get("estimated"))
    counts = ""
    if done or total:
        counts = readable.count(done)
        if total:
            counts += f" of {'about ' if estimated else ''}{readable.count(total)}"
        if unit:
            counts += f" {unit}"
    failed = phase.get("failed", 0)
    duration_text = readable.duration(seconds) if seconds is not None else ""
    details = [counts + (f", {readable.count(failed)} failed" if failed else ""), duration_text]
    if eta is not None:
        details.append(f"about {readable.duration(eta)} left")
    return {
        "name": phase.get("name") or "working",
        "unit": unit,
        "done": done,
        "total": total,
        "failed": failed,
        "estimated": estimated,
        "percent": min(100, int(done * 100 / total)) if total else None,
        "running": is_running,
        "seconds": seconds,
        "eta_seconds": eta,
        "counts_text": counts,
        "duration_text": duration_text,
        "details_text": " · ".join(d for d in details if d),  # counts, failures, duration, ETA
    }


def phase_eta(*, done: int, total: int, elapsed: float | None) -> float | None:
    """Seconds left at the phase's rate so far (done / elapsed); None before there is a rate."""
    if not total or not elapsed or elapsed <= 0 or done <= 0:
        return None
    if done >= total:
        return 0.0
    return (total - done) / (done / elapsed)


def job_outcome(*, job: Job) -> dict:
    """What a successful job did, in words: its kind's summary (``summary``, "" for none), the
    result's scalar facts as readable rows (``rows``) and the next step (``next_step``:
    {"label", "url"} or None). Empty for a job that did not succeed."""
    outcome = {"summary": "", "rows": [], "next_step": None}
    if job.status != JobStatus.SUCCEEDED:
        return outcome
    result = job.result if isinstance(job.result, dict) else {}
    outcome["rows"] = readable.summary_rows(result)
    try:
        params = job_kind_get(job.kind).params.from_json(job.params)
        outcome["summary"] = params.summary(result)
        step = params.next_step(result)
    except (UserError, KeyError, TypeError, ValueError, NoReverseMatch):
        # A result written by older code, or a kind no installed app declares: the rows stay.
        logger.warning("job %s (%s): no summary for its result", job.pk, job.kind, exc_info=True)
        return outcome
    if step is not None:
        outcome["next_step"] = {"label": step.label, "url": step.url}
    return outcome


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


# The marker of a traceback in a job's (or a shard's) error: an exception that was not a UserError.
_TRACEBACK = "\nTraceback (most recent call last):"


def job_failure(*, job: Job) -> dict:
    """Why a failed job failed, in one sentence (``cause``), and the whole recorded error to fold
    away (``details``, "" when the sentence is all of it). A UserError's message is the cause as is;
    an unexpected exception's recorded error (class, message, traceback, from job_execute, or
    "shard 2 of 5 failed: ..." from a shard) is summed up as its first line, said to be unexpected,
    with the job's kind and the step it was in."""
    error = job.error.strip()
    if not error:
        return {"cause": "The job failed without a message.", "details": ""}
    if _TRACEBACK not in error:
        return {"cause": error, "details": ""}
    step = f", step “{job.phase}”" if job.phase else ""
    first = error.split("\n", 1)[0]
    return {"cause": f"Unexpected error in {job.kind_label}{step}: {first}", "details": error}


def job_retry_permitted(*, kind: str, user) -> bool:
    """Whether ``user`` may retry a failed job of ``kind`` (core.services.job_retries): the jobs'
    change permission (as cancelling and resending them) and the kind's ``start_permission``, the
    permission of the page that starts one. False for a kind no installed app declares."""
    if not job_kind_is_registered(kind) or not user.has_perm("core.change_job"):
        return False
    permission = job_kind_get(kind).start_permission
    return permission is None or user.has_perm(permission)


@dataclass(frozen=True)
class JobAhead:
    """An unfinished job ahead of a pending one on its queue."""

    id: int
    label: str  # its kind's
    status: str
    progress: int  # percent, as last reported


@dataclass(frozen=True)
class JobWait:
    """What a pending job waits for: its queue, the unfinished jobs ahead of it there (the first
    few, running ones first: ``ahead``; ``ahead_count`` in all), how long it has waited, and
    whether it has waited longer than WELLCHOSEN_JOB_STALE_AFTER with no job of its queue running
    (``no_worker``: no worker seems to take that queue)."""

    queue: str
    ahead: list[JobAhead]
    ahead_count: int
    waited_seconds: float
    no_worker: bool

    @property
    def more(self) -> int:
        """The jobs ahead beyond those listed."""
        return self.ahead_count - len(self.ahead)

    @property
    def waited(self) -> str:
        return readable.duration(self.waited_seconds)


AHEAD_LISTED = 3


def jobs_waits(*, jobs: Iterable[Job], now: datetime | None = None) -> dict[int, JobWait]:
    """What each pending job of ``jobs`` waits for, by job id (see JobWait), in one query whatever
    their number: the jobs ahead of one are the running jobs of its queue and the pending ones
    queued before it (``queued_at``, then id), the queue being its kind's (``job_kind_queue``: the
    queue its message was sent to). A job of a kind no installed app declares has none."""
    pending = [job for job in jobs if job.status == JobStatus.PENDING and job_kind_is_registered(job.kind)]
    if not pending:
        return {}
    queue_of = {kind.name: job_kind_queue(kind.name) for kind in job_kinds_all()}
    queues = {queue_of[job.kind] for job in pending}
    unfinished = list(
        Job.objects.filter(
            status__in=[JobStatus.PENDING, JobStatus.RUNNING],
            kind__in=[kind for kind, queue in queue_of.items() if queue in queues],
        )
        .order_by("queued_at", "id")
        .values("id", "kind", "status", "progress", "queued_at")
    )
    running = [row["id"] for row in unfinished if row["status"] == JobStatus.RUNNING]
    live = cache.get_many([job_cache_key(job_id, "progress") for job_id in running]) if running else {}
    now = now or timezone.now()
    waits = {}
    for job in pending:
        ahead = [
            row
            for row in unfinished
            if queue_of[row["kind"]] == queue_of[job.kind]
            and row["id"] != job.pk
            and (row["status"] == JobStatus.RUNNING or (row["queued_at"], row["id"]) < (job.queued_at, job.pk))
        ]
        ahead.sort(key=lambda row: row["status"] != JobStatus.RUNNING)  # stable: queue order within each
        waited = max(0.0, (now - job.queued_at).total_seconds())
        waits[job.pk] = JobWait(
            queue=queue_of[job.kind],
            ahead=[_ahead(row, live) for row in ahead[:AHEAD_LISTED]],
            ahead_count=len(ahead),
            waited_seconds=waited,
            no_worker=waited > settings.WELLCHOSEN_JOB_STALE_AFTER
            and not any(row["status"] == JobStatus.RUNNING for row in ahead),
        )
    return waits


def _ahead(row: dict, live: dict) -> JobAhead:
    progress = row["progress"]
    if row["status"] == JobStatus.RUNNING:
        progress = (live.get(job_cache_key(row["id"], "progress")) or {}).get("progress", progress)
    return JobAhead(id=row["id"], label=job_kind_label(row["kind"]), status=row["status"], progress=progress)
