"""Sharded jobs: one job's work split into parts (shards) that several workers run at the same time.

A kind whose work divides (candidate pools: per block of questions) registers a shard handler
beside its handler (``job_kind_register(shard_handler=...)``). Its handler, on the worker that
claimed the job, does the part that does not divide (building the indexes), then calls
``job_shards_run``:

1. the shards are planned once: JobShard rows, each with the parameters of its part. A job taken
   over after its worker died finds its rows and keeps that plan;
2. one message per unfinished shard goes to ``core.tasks.run_job_shard`` on the job's queue, so
   idle workers join in (``job_shard_execute``);
3. the job's own worker claims and runs shards too, then waits for the others' (polling every
   second, keeping the job's heartbeat, aggregating the shards' progress into the job's and
   stopping on a cancel), and takes over any whose worker stopped beating;
4. the shards' results come back in shard order for the handler to merge; a failed shard fails
   the job with its error.

A shard is claimed like a job: a conditional UPDATE of a pending shard, or of a running one whose
heartbeat is stale, that bumps ``attempts`` (only one of two concurrent claims matches the
attempts it read), so it works the same on SQLite and PostgreSQL; only the attempt that claimed a
shard may finish it. Each running shard keeps a heartbeat of its own (cache and row), so a worker
killed mid-shard loses that shard's uncommitted work only; the shard is taken over by the job's
worker or by a message beat sends again (``job_shards_requeue_stale``).
"""

import logging
import os
import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.module_loading import import_string

from core.errors import JobCancelled, UserError
from core.job_registry import job_kind_get, job_kind_is_registered
from core.models import Job, JobShard, JobShardStatus, JobStatus, job_cache_key, job_shard_cache_key
from core.selectors import job_shards_live, job_shards_totals
from core.services.jobs import JobProgress, beating, job_queue

logger = logging.getLogger(__name__)

# The Celery task that runs one shard (a dotted path: core.tasks imports this module).
RUN_SHARD_TASK = "core.tasks.run_job_shard"

_POLL_SECONDS = 1.0
_REPORT_EVERY_SECONDS = 1.0
# The job's summed progress is cheap (one query of the live shards), so it follows the shards
# closely: a fast shard still shows in the job's counts before the next one ends.
_JOB_REPORT_EVERY_SECONDS = 0.25
_OPEN = (JobShardStatus.PENDING, JobShardStatus.RUNNING)


@dataclass(frozen=True)
class ShardSpec:
    """One planned shard: the parameters its handler reads, and how many units of work it holds
    (the job's progress total before any shard has started)."""

    params: dict
    total: int = 0


class ShardLost(Exception):
    """Another attempt took this shard over (this one was thought dead): its work is that attempt's now."""


def worker_identity() -> str:
    """Who claims a shard: host and process, recorded on the row."""
    return f"{socket.gethostname()}:{os.getpid()}"[:200]


def job_shards_plan(*, job: Job, plan: Callable[[], list[ShardSpec]]) -> list[JobShard]:
    """The job's shards, in order: the rows an earlier attempt planned (a job taken over keeps its
    plan), else ``plan()``'s, recorded now."""
    shards = list(JobShard.objects.filter(job=job).order_by("number"))
    if shards:
        return shards
    rows = [JobShard(job=job, number=n, params=spec.params, total_count=spec.total) for n, spec in enumerate(plan())]
    JobShard.objects.bulk_create(rows, ignore_conflicts=True)
    return list(JobShard.objects.filter(job=job).order_by("number"))


def job_shards_enqueue(*, job: Job, numbers: list[int]) -> bool:
    """One message per shard to ``core.tasks.run_job_shard`` on the job's queue, once the
    surrounding transaction commits. None in eager mode (tests; no broker): the job's own worker
    runs every shard. A broker that cannot be reached costs the help of other workers, not the job.
    Returns whether messages are to be sent."""
    if not numbers or current_app.conf.task_always_eager:
        return False
    queue = job_queue(job.kind)

    def send() -> None:
        task = import_string(RUN_SHARD_TASK)
        try:
            for number in numbers:
                task.apply_async(args=[job.pk, number], queue=queue)
        except Exception:  # noqa: BLE001 - the job's worker still runs every shard
            logger.warning("job %s: shard messages not sent; its own worker runs the shards", job.pk, exc_info=True)

    transaction.on_commit(send)
    return True


def job_shard_claim(*, job_id: int, number: int | None = None) -> JobShard | None:
    """Take a shard of the job for this worker: shard ``number``, or with None the first pending
    one (then the first whose worker died). Pending, or running with a stale heartbeat: taken over,
    its attempts bumped. None when there is none to take."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.WELLCHOSEN_JOB_STALE_AFTER)
    open_shards = JobShard.objects.filter(job_id=job_id, status__in=_OPEN)
    if number is not None:
        open_shards = open_shards.filter(number=number)
    for shard in sorted(open_shards, key=lambda s: (s.status != JobShardStatus.PENDING, s.number)):
        if shard.status == JobShardStatus.RUNNING and _alive_since(shard) >= stale_before:
            continue
        claimed = JobShard.objects.filter(pk=shard.pk, attempts=shard.attempts, status__in=_OPEN).update(
            status=JobShardStatus.RUNNING,
            attempts=F("attempts") + 1,
            started_at=shard.started_at or now,
            heartbeat_at=now,
            worker=worker_identity(),
            error="",
        )
        if claimed:
            shard.refresh_from_db()
            cache.set(job_shard_cache_key(job_id, shard.number, "heartbeat"), now.timestamp(), timeout=None)
            if shard.attempts > 1:
                logger.warning("job %s: shard %s taken over (attempt %s)", job_id, shard.number, shard.attempts)
            return shard
    return None


def _alive_since(shard: JobShard) -> datetime:
    beats = [shard.heartbeat_at or shard.started_at or timezone.now()]
    cached = cache.get(job_shard_cache_key(shard.job_id, shard.number, "heartbeat"))
    if cached is not None:
        beats.append(datetime.fromtimestamp(cached, tz=UTC))
    return max(beats)


class ShardProgress:
    """Progress of one running shard, with the interface of JobProgress (``update``): its counts
    go to the cache, and to the row when no transaction is open, which also beats its heartbeat.
    A report raises JobCancelled once the job was cancelled or has ended (another shard failed),
    and ShardLost once another attempt took the shard over. ``on_report``: called after each
    written report (the job's worker aggregates the shards into the job's progress)."""

    def __init__(self, shard: JobShard, *, on_report: Callable[[], None] | None = None) -> None:
        self.shard = shard
        self.on_report = on_report
        self.phase = ""
        self.counts = {"done_count": shard.done_count, "total_count": shard.total_count, "failed_count": 0}
        self._last_write = 0.0

    def update(
        self,
        *,
        done: int,
        total: int,
        failed: int = 0,
        force: bool = False,
        phase: str | None = None,
        unit: str | None = None,
        estimated: bool = False,
    ) -> None:
        self.counts = {"done_count": done, "total_count": total, "failed_count": failed}
        self.phase = phase if phase is not None else self.phase
        now = time.monotonic()
        if not force and now - self._last_write < _REPORT_EVERY_SECONDS:
            return
        self._last_write = now
        shard = self.shard
        beat = timezone.now()
        cache.set(job_shard_cache_key(shard.job_id, shard.number, "progress"), self.counts, timeout=24 * 3600)
        cache.set(job_shard_cache_key(shard.job_id, shard.number, "heartbeat"), beat.timestamp(), timeout=None)
        outside_transaction = not transaction.get_connection().in_atomic_block
        if outside_transaction:
            mine = JobShard.objects.filter(pk=shard.pk, attempts=shard.attempts, status=JobShardStatus.RUNNING)
            if not mine.update(heartbeat_at=beat, **self.counts):
                raise ShardLost()
        if self.stop_requested(read_row=outside_transaction):
            raise JobCancelled()
        if self.on_report is not None:
            self.on_report()

    def stop_requested(self, *, read_row: bool = True) -> bool:
        if cache.get(job_cache_key(self.shard.job_id, "cancel")):
            return True
        if not read_row:
            return False
        row = Job.objects.filter(pk=self.shard.job_id).values_list("status", "cancel_requested").first()
        return row is None or row[0] != JobStatus.RUNNING or row[1]


def _shard_run(*, job: Job, shard: JobShard, on_report: Callable[[], None] | None = None) -> None:
    """Run a claimed shard with its kind's shard handler and record the outcome. Raises
    JobCancelled (recorded on the shard first) when the job was cancelled or has ended."""
    kind = job_kind_get(job.kind)
    progress = ShardProgress(shard, on_report=on_report)
    try:
        if kind.shard_handler is None:
            raise UserError(f"job kind {job.kind!r} has no shard handler")
        with beating(key=job_shard_cache_key(job.pk, shard.number, "heartbeat"), name=f"job-{job.pk}-{shard.number}"):
            result = kind.shard_handler(kind.params.from_json(job.params), job, shard, progress)
    except ShardLost:
        logger.warning("job %s: shard %s was taken over by another attempt; stopped", job.pk, shard.number)
    except JobCancelled:
        _shard_finish(shard, progress, status=JobShardStatus.FAILED, error="stopped: the job was cancelled or ended")
        raise
    except UserError as exc:
        _shard_finish(shard, progress, status=JobShardStatus.FAILED, error=str(exc))
    except Exception as exc:  # a bug or an outage: keep the trace
        logger.exception("job %s (%s): shard %s failed", job.pk, job.kind, shard.number)
        error = f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"
        _shard_finish(shard, progress, status=JobShardStatus.FAILED, error=error)
    else:
        _shard_finish(shard, progress, status=JobShardStatus.SUCCEEDED, result=result or {})


def _shard_finish(
    shard: JobShard, progress: ShardProgress, *, status: str, error: str = "", result: dict | None = None
) -> None:
    now = timezone.now()
    values = {"status": status, "error": error, "finished_at": now, "heartbeat_at": now, **progress.counts}
    if result is not None:
        values["result"] = result
        values["done_count"] = max(values["done_count"], values["total_count"])
    # Only the attempt that claimed the shard may finish it (a takeover bumps attempts).
    JobShard.objects.filter(pk=shard.pk, attempts=shard.attempts, status=JobShardStatus.RUNNING).update(**values)
    cache.delete_many(
        [job_shard_cache_key(shard.job_id, shard.number, what) for what in ("progress", "heartbeat", "requeued")]
    )


class _JobReport:
    """The shards' counts summed into the job's progress, at most four times a second unless forced."""

    def __init__(self, job: Job, progress: JobProgress, *, phase: str, unit: str) -> None:
        self.job, self.progress, self.phase, self.unit = job, progress, phase, unit
        self._last = 0.0

    def __call__(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < _JOB_REPORT_EVERY_SECONDS:
            return
        self._last = now
        done, total, failed = job_shards_totals(job_shards_live(job_id=self.job.pk))
        self.progress.update(done=done, total=total, failed=failed, force=force, phase=self.phase, unit=self.unit)


def job_shards_run(
    *, job: Job, progress: JobProgress, plan: Callable[[], list[ShardSpec]], phase: str, unit: str
) -> list[dict]:
    """Run the job's shards on this worker and any other that takes their messages, and return
    their results in shard order once every one has succeeded (see the module's docstring).

    ``plan``: the shards, called only when the job has none yet. ``phase``/``unit``: what the
    job's progress calls the shards' summed counts. A failed shard raises UserError with its
    error; a cancel raises JobCancelled (as JobProgress does)."""
    shards = job_shards_plan(job=job, plan=plan)
    job_shards_enqueue(job=job, numbers=[s.number for s in shards if not s.is_finished])
    report = _JobReport(job, progress, phase=phase, unit=unit)
    report(force=True)
    while True:
        failed = JobShard.objects.filter(job=job, status=JobShardStatus.FAILED).order_by("number").first()
        if failed is not None:
            if progress.cancel_requested():  # the shard stopped because of the cancel
                raise JobCancelled()
            raise UserError(f"shard {failed.number + 1} of {len(shards)} failed: {failed.error}")
        shard = job_shard_claim(job_id=job.pk)
        if shard is not None:
            _shard_run(job=job, shard=shard, on_report=report)
            report(force=True)  # the finished shard counts at once
            continue
        if not JobShard.objects.filter(job=job).exclude(status=JobShardStatus.SUCCEEDED).exists():
            break
        report()  # the job's heartbeat, and JobCancelled once a cancel was asked
        time.sleep(_POLL_SECONDS)
    report(force=True)
    return list(JobShard.objects.filter(job=job).order_by("number").values_list("result", flat=True))


def job_shard_execute(*, job_id: int, number: int) -> None:
    """Run shard ``number`` of a running job on this worker (``core.tasks.run_job_shard``); when
    another worker holds it or it is done, the job's first shard still to do instead: a message is
    one shard's worth of help. Nothing for a job that ended or is being cancelled."""
    job = Job.objects.filter(pk=job_id, status=JobStatus.RUNNING, cancel_requested=False).first()
    if job is None:
        logger.info("job %s: shard %s not run (the job is not running)", job_id, number)
        return
    shard = job_shard_claim(job_id=job_id, number=number) or job_shard_claim(job_id=job_id)
    if shard is None:
        logger.info("job %s: no shard left to claim", job_id)
        return
    try:
        _shard_run(job=job, shard=shard)
    except JobCancelled:
        logger.info("job %s: shard %s stopped (the job was cancelled or ended)", job_id, shard.number)


def job_shards_requeue_stale(*, now: datetime | None = None) -> list[tuple[int, int]]:
    """Send a new message for each running shard, of a running job, whose worker stopped beating
    (at most once per stale period each), so that an idle worker takes it over; the job's own
    worker would too, once it has no other shard to run. Returns (job id, shard number) pairs."""
    now = now or timezone.now()
    stale_after = settings.WELLCHOSEN_JOB_STALE_AFTER
    stale_before = now - timedelta(seconds=stale_after)
    stale = (
        JobShard.objects.filter(job__status=JobStatus.RUNNING, status=JobShardStatus.RUNNING)
        .filter(Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True))
        .select_related("job")
        .order_by("job_id", "number")
    )
    resent = []
    for shard in stale:
        if not job_kind_is_registered(shard.job.kind) or _alive_since(shard) >= stale_before:
            continue  # a live worker inside a transaction (its cache beat is fresh)
        if not cache.add(job_shard_cache_key(shard.job_id, shard.number, "requeued"), now.timestamp(), stale_after):
            continue
        if job_shards_enqueue(job=shard.job, numbers=[shard.number]):
            resent.append((shard.job_id, shard.number))
    if resent:
        logger.warning("shards %s: their workers stopped beating; sent again", resent)
    return resent
