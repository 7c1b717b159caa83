"""Background jobs: creation, hand-off to Celery, claiming, progress and completion.

One Celery task (``core.tasks.run_job``) runs every job: ``job_execute`` claims the row, finds
its kind in the registry (core.job_registry) and calls the kind's handler with its typed
parameters. The Job row is the record; a redelivered or duplicated message finds the row
already claimed (or finished) and does nothing.
"""

import logging
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.module_loading import import_string

from core.errors import JobCancelled, UserError
from core.job_registry import JobParams, job_kind_get, job_kind_is_registered, job_kind_queue
from core.models import Job, JobStatus, job_cache_key

logger = logging.getLogger(__name__)

# The one Celery task that runs every job (a dotted path: core.tasks imports this module).
RUN_JOB_TASK = "core.tasks.run_job"

_PROGRESS_EVERY_SECONDS = 1.0


def job_create(*, params: JobParams, created_by=None, trigger: str = "", enqueue: bool = True) -> Job:
    """Record a job of ``params``' kind and hand it to a worker once the surrounding transaction
    commits. ``trigger``: what started a job no person started ("new scores", "periodic sync")."""
    kind = job_kind_get(params.kind)
    if kind.params is not type(params):
        raise ValueError(f"job kind {params.kind!r} takes {kind.params.__name__}, not {type(params).__name__}")
    job = Job.objects.create(kind=params.kind, params=params.to_json(), created_by=created_by, trigger=trigger[:100])
    if enqueue:
        job_enqueue(job_id=job.pk, kind=job.kind)
    return job


def job_enqueue(*, job_id: int, kind: str) -> None:
    """Send the job's message, on its kind's queue, once the surrounding transaction commits."""
    queue = job_kind_queue(kind)

    def send() -> None:
        import_string(RUN_JOB_TASK).apply_async(args=[job_id], queue=queue)

    transaction.on_commit(send)


def jobs_resend_pending(*, job_ids: list[int]) -> list[int]:
    """Send the pending jobs among ``job_ids`` again (their message was lost: the broker was down
    when they were created). Each goes to the end of its queue, so its place in the wait that a job
    page shows (``queued_at``) moves there too. Jobs already running or finished are left alone;
    an extra message for a job that a worker takes meanwhile is dropped by ``job_claim``. Returns
    the ids sent."""
    with transaction.atomic():
        pending = list(
            Job.objects.select_for_update()
            .filter(pk__in=job_ids, status=JobStatus.PENDING)
            .order_by("pk")
            .values_list("pk", "kind")
        )
        pending = [(job_id, kind) for job_id, kind in pending if job_kind_is_registered(kind)]
        Job.objects.filter(pk__in=[job_id for job_id, _ in pending]).update(queued_at=timezone.now())
        for job_id, kind in pending:
            job_enqueue(job_id=job_id, kind=kind)
    return [job_id for job_id, _ in pending]


def job_claim(*, job_id: int) -> Job | None:
    """Take the job for this worker: pending, or running with a dead worker (stale heartbeat).

    Returns None when another worker holds it or it has finished.
    """
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.WELLCHOSEN_JOB_STALE_AFTER)
    job = Job.objects.filter(pk=job_id).first()
    if job is None or job.is_finished:
        return None
    if job.status == JobStatus.RUNNING and _alive_since(job) >= stale_before:
        return None
    claimed = (
        Job.objects.filter(pk=job_id, attempts=job.attempts)
        .filter(Q(status=JobStatus.PENDING) | Q(status=JobStatus.RUNNING))
        .update(
            status=JobStatus.RUNNING,
            started_at=job.started_at or now,
            heartbeat_at=now,
            attempts=F("attempts") + 1,
            error="",
        )
    )
    if not claimed:
        return None
    job.refresh_from_db()
    cache.set(job_cache_key(job_id, "heartbeat"), now.timestamp(), timeout=None)
    return job


def jobs_requeue_stale(*, now: datetime | None = None) -> list[int]:
    """Send a new message for every running job whose worker died (its heartbeat went stale).

    A dead worker's message usually comes back by itself (tasks ack late), but not always: the
    filesystem broker of `make run` never redelivers, and a Redis broker redelivers a long job's
    message after its visibility timeout (an hour) to a worker that finds the job alive and drops
    it, so if the first worker dies after that, no message is left. The new message is claimed
    like any other (``job_claim`` takes a stale job over once) and the job resumes where its
    committed work stopped. A job is sent again at most once per stale period. Returns the ids."""
    now = now or timezone.now()
    stale_after = settings.WELLCHOSEN_JOB_STALE_AFTER
    stale_before = now - timedelta(seconds=stale_after)
    resent = []
    candidates = Job.objects.filter(status=JobStatus.RUNNING).filter(
        Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True)
    )
    for job in candidates.order_by("pk"):
        if not job_kind_is_registered(job.kind) or _alive_since(job) >= stale_before:
            continue  # the row's beat is old but the cache's is fresh: a live worker inside a transaction
        if not cache.add(job_cache_key(job.pk, "requeued"), now.timestamp(), timeout=stale_after):
            continue  # sent again less than a stale period ago; its message may be waiting in the queue
        job_enqueue(job_id=job.pk, kind=job.kind)
        resent.append(job.pk)
    if resent:
        logger.warning("jobs %s: their workers stopped beating; sent again", resent)
    return resent


def _alive_since(job: Job):
    beats = [job.heartbeat_at or job.started_at or job.created_at]
    cached = cache.get(job_cache_key(job.pk, "heartbeat"))
    if cached is not None:
        beats.append(datetime.fromtimestamp(cached, tz=UTC))
    return max(beats)


class JobProgress:
    """Progress and cancellation for a running job, phase by phase.

    A job of several steps names each one (``phase``: "building the lexical index") and says what
    its counts count (``unit``: "utterances"); each phase has its own done/total, and the phases
    seen are kept in order with their final counts and durations (``Job.phases``), so a job page
    shows the earlier ones as done, the current one with its bar and an ETA from its rate.

    Imports run inside one transaction, so what they write to the Job row is invisible
    until the end (and on SQLite would contend for the write lock). Progress therefore goes
    to the cache always and to the row only when no transaction is open.

    A job run inside another job's handler (a campaign runs its systems' evaluations) has the
    outer job's progress as ``parent``: every report goes to both (under the phase name
    ``job #<id>: <phase>`` in the outer one), so the outer job keeps its heartbeat and shows the
    inner step, and a cancel of either one stops the inner job.
    """

    def __init__(self, job: Job, parent: "JobProgress | None" = None) -> None:
        self.job = job
        self.parent = parent
        self.phase = ""
        self.phases: list[dict] = []  # the phases seen, the last one running (see Job.phases)
        self._started = 0.0  # wall-clock start of the current phase (epoch seconds)
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
        """Report counts; ``phase`` names the step they count and stays until another is named,
        ``unit`` says what they count ("lines", "questions"); ``estimated``: ``total`` is an
        estimate (lines from the bytes read so far)."""
        if phase is not None and phase != self.phase or not self.phases:
            self._phase_start(phase if phase is not None else self.phase)
            force = True
        current = self.phases[-1]
        current.update(done=done, total=total, failed=failed, estimated=estimated)
        if unit is not None:
            current["unit"] = unit
        self._report(force=force)
        if self.parent is not None:
            inner = f"job #{self.job.pk}: {self.phase or self.job.kind_label}"[:64]
            self.parent.update(
                done=done,
                total=total,
                failed=failed,
                force=force,
                phase=inner,
                unit=current["unit"],
                estimated=estimated,
            )

    def _phase_start(self, name: str) -> None:
        now = time.time()
        if self.phases:
            self.phases[-1]["seconds"] = round(now - self._started, 3)
        self.phase = name[:64]
        self._started = now
        self.phases.append(
            {"name": self.phase, "unit": "", "done": 0, "total": 0, "failed": 0, "estimated": False, "seconds": None}
        )

    def values(self) -> dict:
        """What the job row and the cache hold: the current phase's counts and every phase seen."""
        current = self.phases[-1] if self.phases else {"done": 0, "total": 0, "failed": 0}
        done, total = current["done"], current["total"]
        return {
            "progress": min(100, int(done * 100 / total)) if total else 0,
            "done_count": done,
            "total_count": total,
            "failed_count": current["failed"],
            "phase": self.phase,
            "phases": self.phases_record(),
        }

    def phases_record(self, *, finished: bool = False) -> list[dict]:
        """The phases as stored: the running one with its start time (``started``, epoch seconds),
        or, ``finished``, with its duration like the others."""
        phases = [dict(p) for p in self.phases]
        if phases:
            if finished:
                phases[-1]["seconds"] = round(time.time() - self._started, 3)
            else:
                phases[-1]["started"] = self._started
        return phases

    def _report(self, *, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self._last_write < _PROGRESS_EVERY_SECONDS:
            return
        self._last_write = now
        values = self.values()
        cache.set(job_cache_key(self.job.pk, "progress"), values, timeout=24 * 3600)
        cache.set(job_cache_key(self.job.pk, "heartbeat"), timezone.now().timestamp(), timeout=None)
        if not transaction.get_connection().in_atomic_block:
            Job.objects.filter(pk=self.job.pk).update(heartbeat_at=timezone.now(), **values)
        if self.cancel_requested():
            raise JobCancelled()

    def cancel_requested(self) -> bool:
        if cache.get(job_cache_key(self.job.pk, "cancel")):
            return True
        if transaction.get_connection().in_atomic_block:
            return False
        return Job.objects.filter(pk=self.job.pk, cancel_requested=True).exists()


def job_execute(*, job_id: int, parent: JobProgress | None = None) -> None:
    """Claim the job, run its kind's handler and record the outcome. Never raises for job errors.

    ``parent``: the progress of the job whose handler runs this one (see JobProgress)."""
    job = job_claim(job_id=job_id)
    if job is None:
        logger.info("job %s not claimed (finished or held by a live worker)", job_id)
        return
    progress = JobProgress(job, parent=parent)
    try:
        with beating(key=job_cache_key(job_id, "heartbeat"), name=f"job-{job_id}"):
            kind = job_kind_get(job.kind)
            result = kind.handler(kind.params.from_json(job.params), job, progress)
    except JobCancelled:
        _finish(
            job,
            progress,
            status=JobStatus.CANCELLED,
            error="cancelled on request (an unfinished transaction was rolled back)",
        )
    except UserError as exc:
        _finish(job, progress, status=JobStatus.FAILED, error=str(exc))
    except Exception as exc:  # a bug or an outage: keep the trace for the researcher
        logger.exception("job %s (%s) failed", job_id, job.kind)
        _finish(
            job, progress, status=JobStatus.FAILED, error=f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"
        )
    else:
        _finish(job, progress, status=JobStatus.SUCCEEDED, result=result or {})


@contextmanager
def beating(*, key: str, name: str) -> Iterator[None]:
    """Keep a job's (or a shard's) cache heartbeat, at ``key``, fresh from a thread while its
    handler runs.

    Progress reports beat too, but a step can run for minutes without one: loading and
    compiling a model (23-153 s measured), or one batch of a 1 B model on a CPU (about 4 min
    for 256 questions, from 2 x parameters x tokens at 0.25 TFLOP/s). Without this beat such a
    job would look dead to a redelivered message, which would then run it a second time beside
    the first. The thread dies with its process, so a crashed worker's job still goes stale and
    is taken over. Only the cache is written: a second writer on SQLite could make the
    handler's own transactions fail."""
    every = max(1.0, settings.WELLCHOSEN_JOB_STALE_AFTER / 5)
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(every):
                try:
                    cache.set(key, timezone.now().timestamp(), timeout=None)
                except Exception:  # noqa: BLE001 - a cache outage must not end the job; its progress still beats
                    logger.warning("%s: heartbeat not written", name, exc_info=True)
        finally:
            cache.close()  # this thread's own cache connection (Django opens one per thread)

    thread = threading.Thread(target=beat, name=f"{name}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _finish(job: Job, progress: JobProgress, *, status: str, error: str = "", result: dict | None = None) -> None:
    """Record the outcome, with the phases as the handler last reported them (their counts are
    exact: reports between two writes are kept in memory) and the last one's duration."""
    values = {"status": status, "error": error, "finished_at": timezone.now(), "heartbeat_at": timezone.now()}
    values.update(progress.values())
    values["phases"] = progress.phases_record(finished=True)
    if result is not None:
        # The handler returned: every phase ran to its end, whatever its last throttled report said.
        for phase in values["phases"]:
            if phase["total"] and not phase["estimated"]:
                phase["done"] = max(phase["done"], phase["total"])
        if values["total_count"]:
            values["done_count"] = max(values["done_count"], values["total_count"])
        values["result"] = result
        values["progress"] = 100
    # Only the attempt that claimed the job may finish it (a takeover bumps attempts).
    Job.objects.filter(pk=job.pk, attempts=job.attempts, status=JobStatus.RUNNING).update(**values)
    cache.delete_many([job_cache_key(job.pk, what) for what in ("progress", "cancel", "heartbeat", "requeued")])


def job_cancel(*, job_id: int) -> Job:
    """Ask a job to stop. A pending job is cancelled at once; a running one at its next progress report."""
    cache.set(job_cache_key(job_id, "cancel"), True, timeout=24 * 3600)
    Job.objects.filter(pk=job_id, status=JobStatus.PENDING).update(
        status=JobStatus.CANCELLED, finished_at=timezone.now(), error="cancelled before it started"
    )
    Job.objects.filter(pk=job_id, status=JobStatus.RUNNING).update(cancel_requested=True)
    return Job.objects.get(pk=job_id)
