"""Reads of background jobs."""

import logging
import time
from collections.abc import Iterable
from typing import Any

from django.core.cache import cache
from django.db.models import Case, CharField, F, Q, QuerySet, Value, When, Window
from django.db.models.functions import RowNumber
from django.urls import NoReverseMatch

from core import readable
from core.errors import UserError
from core.job_registry import job_kind_get
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
