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

A job may run several stages of shards, one after the other (the pool job encodes its
repository's utterances in shards of stage "encoding", then retrieves its questions' candidates
in shards of stage ""): each ``job_shards_run(stage=...)`` is its own plan, numbered from 0, run
by the kind's shard handler for that stage, and everything here (plan, claim, messages, progress,
failures, the stale sweep) is scoped to that stage.

The claim and the heartbeat of a shard: ``core.services.job_shard_claims``. A worker killed
mid-shard loses that shard's uncommitted work only; the shard is taken over by the job's worker or
by a message beat sends again (``job_shards_requeue_stale``).
"""

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.module_loading import import_string

from core.errors import JobCancelled, UserError
from core.job_registry import job_kind_get, job_kind_is_registered, job_kind_queue
from core.models import Job, JobShard, JobShardStatus, JobStatus
from core.selectors import job_shards_live, job_shards_totals
from core.services.job_shard_claims import ShardLost, ShardProgress, job_shard_claim, shard_alive_since
from core.services.jobs import JobProgress, beating

logger = logging.getLogger(__name__)

# The Celery task that runs one shard (a dotted path: core.tasks imports this module).
RUN_SHARD_TASK = "core.tasks.run_job_shard"

_POLL_SECONDS = 1.0
# The job's summed progress is cheap (one query of the live shards), so it follows the shards
# closely: a fast shard still shows in the job's counts before the next one ends.
_JOB_REPORT_EVERY_SECONDS = 0.25


@dataclass(frozen=True)
class ShardSpec:
    """One planned shard: the parameters its handler reads, and how many units of work it holds
    (the job's progress total before any shard has started)."""

    params: dict
    total: int = 0


def _stage_shards(job: Job, stage: str):
    return JobShard.objects.filter(job=job, stage=stage).order_by("number")


def job_shards_plan(*, job: Job, plan: Callable[[], list[ShardSpec]], stage: str = "") -> list[JobShard]:
    """The shards of the job's ``stage``, in order: the rows an earlier attempt planned (a job
    taken over keeps its plan), else ``plan()``'s, recorded now."""
    shards = list(_stage_shards(job, stage))
    if shards:
        return shards
    rows = [
        JobShard(job=job, stage=stage, number=n, params=spec.params, total_count=spec.total)
        for n, spec in enumerate(plan())
    ]
    JobShard.objects.bulk_create(rows, ignore_conflicts=True)
    return list(_stage_shards(job, stage))


def job_shards_enqueue(*, job: Job, numbers: list[int], stage: str = "") -> bool:
    """One message per shard of ``stage`` to ``core.tasks.run_job_shard`` on the job's queue, once
    the surrounding transaction commits. None in eager mode (tests; no broker): the job's own
    worker runs every shard. A broker that cannot be reached costs the help of other workers, not
    the job. Returns whether messages are to be sent."""
    if not numbers or current_app.conf.task_always_eager:
        return False
    queue = job_kind_queue(job.kind)

    def send() -> None:
        task = import_string(RUN_SHARD_TASK)
        try:
            for number in numbers:
                task.apply_async(args=[job.pk, number, stage], queue=queue)
        except Exception:  # noqa: BLE001 - the job's worker still runs every shard
            logger.warning("job %s: shard messages not sent; its own worker runs the shards", job.pk, exc_info=True)

    transaction.on_commit(send)
    return True


def _shard_run(*, job: Job, shard: JobShard, on_report: Callable[[], None] | None = None) -> None:
    """Run a claimed shard with its kind's shard handler for its stage and record the outcome.
    Raises JobCancelled (recorded on the shard first) when the job was cancelled or has ended."""
    kind = job_kind_get(job.kind)
    progress = ShardProgress(shard, on_report=on_report)
    name = f"job-{job.pk}-{shard.stage}-{shard.number}" if shard.stage else f"job-{job.pk}-{shard.number}"
    try:
        handler = kind.shard_handler(shard.stage)
        with beating(key=shard.cache_key("heartbeat"), name=name):
            result = handler(kind.params.from_json(job.params), job, shard, progress)
    except ShardLost:
        logger.warning("job %s: %s was taken over by another attempt; stopped", job.pk, shard)
    except JobCancelled:
        _shard_finish(shard, progress, status=JobShardStatus.FAILED, error="stopped: the job was cancelled or ended")
        raise
    except UserError as exc:
        _shard_finish(shard, progress, status=JobShardStatus.FAILED, error=str(exc))
    except Exception as exc:  # a bug or an outage: keep the trace
        logger.exception("job %s (%s): %s failed", job.pk, job.kind, shard)
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
    cache.delete_many([shard.cache_key(what) for what in ("progress", "heartbeat", "requeued")])


class _JobReport:
    """The counts of one stage's shards summed into the job's progress, at most four times a
    second unless forced."""

    def __init__(self, job: Job, progress: JobProgress, *, stage: str, phase: str, unit: str) -> None:
        self.job, self.progress, self.stage, self.phase, self.unit = job, progress, stage, phase, unit
        self._last = 0.0

    def __call__(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < _JOB_REPORT_EVERY_SECONDS:
            return
        self._last = now
        done, total, failed = job_shards_totals(job_shards_live(job_id=self.job.pk, stage=self.stage))
        self.progress.update(done=done, total=total, failed=failed, force=force, phase=self.phase, unit=self.unit)


def job_shards_run(
    *, job: Job, progress: JobProgress, plan: Callable[[], list[ShardSpec]], phase: str, unit: str, stage: str = ""
) -> list[dict]:
    """Run the job's shards of ``stage`` on this worker and any other that takes their messages,
    and return their results in shard order once every one has succeeded (see the module's
    docstring).

    ``plan``: the shards, called only when the stage has none yet. ``phase``/``unit``: what the
    job's progress calls the shards' summed counts. A failed shard raises UserError with its
    error; a cancel raises JobCancelled (as JobProgress does)."""
    shards = job_shards_plan(job=job, plan=plan, stage=stage)
    job_shards_enqueue(job=job, numbers=[s.number for s in shards if not s.is_finished], stage=stage)
    report = _JobReport(job, progress, stage=stage, phase=phase, unit=unit)
    report(force=True)
    while True:
        failed = _stage_shards(job, stage).filter(status=JobShardStatus.FAILED).first()
        if failed is not None:
            if progress.cancel_requested():  # the shard stopped because of the cancel
                raise JobCancelled()
            named = f"{stage} shard" if stage else "shard"
            raise UserError(f"{named} {failed.number + 1} of {len(shards)} failed: {failed.error}")
        shard = job_shard_claim(job_id=job.pk, stage=stage)
        if shard is not None:
            _shard_run(job=job, shard=shard, on_report=report)
            report(force=True)  # the finished shard counts at once
            continue
        if not _stage_shards(job, stage).exclude(status=JobShardStatus.SUCCEEDED).exists():
            break
        report()  # the job's heartbeat, and JobCancelled once a cancel was asked
        time.sleep(_POLL_SECONDS)
    report(force=True)
    return list(_stage_shards(job, stage).values_list("result", flat=True))


def job_shard_execute(*, job_id: int, number: int, stage: str = "") -> None:
    """Run shard ``number`` of ``stage`` of a running job on this worker (``core.tasks.run_job_shard``);
    when another worker holds it or it is done, the stage's first shard still to do instead: a
    message is one shard's worth of help. Nothing for a job that ended or is being cancelled."""
    job = Job.objects.filter(pk=job_id, status=JobStatus.RUNNING, cancel_requested=False).first()
    if job is None:
        logger.info("job %s: shard %s not run (the job is not running)", job_id, number)
        return
    shard = job_shard_claim(job_id=job_id, number=number, stage=stage) or job_shard_claim(job_id=job_id, stage=stage)
    if shard is None:
        logger.info("job %s: no shard of stage %r left to claim", job_id, stage)
        return
    try:
        _shard_run(job=job, shard=shard)
    except JobCancelled:
        logger.info("job %s: %s stopped (the job was cancelled or ended)", job_id, shard)


def job_shards_requeue_stale(*, now: datetime | None = None) -> list[tuple[int, str, int]]:
    """Send a new message for each running shard, of a running job, whose worker stopped beating
    (at most once per stale period each), so that an idle worker takes it over; the job's own
    worker would too, once it has no other shard of that stage to run. Returns (job id, stage,
    shard number) triples."""
    now = now or timezone.now()
    stale_after = settings.WELLCHOSEN_JOB_STALE_AFTER
    stale_before = now - timedelta(seconds=stale_after)
    stale = (
        JobShard.objects.filter(job__status=JobStatus.RUNNING, status=JobShardStatus.RUNNING)
        .filter(Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True))
        .select_related("job")
        .order_by("job_id", "id")
    )
    resent = []
    for shard in stale:
        if not job_kind_is_registered(shard.job.kind) or shard_alive_since(shard) >= stale_before:
            continue  # a live worker inside a transaction (its cache beat is fresh)
        if not cache.add(shard.cache_key("requeued"), now.timestamp(), stale_after):
            continue
        if job_shards_enqueue(job=shard.job, numbers=[shard.number], stage=shard.stage):
            resent.append((shard.job_id, shard.stage, shard.number))
    if resent:
        logger.warning("shards %s: their workers stopped beating; sent again", resent)
    return resent
