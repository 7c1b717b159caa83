"""Killing a worker mid-job: a long job is started on a real Celery worker, the worker is killed
with SIGKILL once the job reported part of its work done, a second worker's beat sweeps the stale
job and hands it over, and the test then checks that the result is exactly that of a run never
killed."""

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache

from core.job_registry import job_kind_get
from core.models import Job, JobStatus, job_cache_key
from tests.worker_helpers import HANG_GUARD_S, Broker, Worker, send, wait_finished, worker_start

# Short enough for a test, long enough that a live worker (beating every second) never looks dead
# on a busy two-core machine; beat sweeps as often.
STALE_AFTER = 3


@dataclass
class Cluster:
    """Workers started one after the other on one Redis broker and one Redis cache, as deployed."""

    broker: Broker
    data_dir: Path
    logs: Path
    env: dict
    workers: list[Worker] = field(default_factory=list)

    def start_worker(self, name: str) -> Worker:
        worker = worker_start(
            broker=self.broker,
            queues=["default", django_settings.WELLCHOSEN_GPU_QUEUE],
            name=f"{name}-{uuid.uuid4().hex[:6]}",
            data_dir=self.data_dir,
            log=self.logs / f"{name}.log",
            env=self.env,
            beat=True,
        )
        self.workers.append(worker)
        return worker

    def enqueue(self, job: Job) -> None:
        """The job's message on its kind's queue (as job_enqueue sends it)."""
        queue = job_kind_get(job.kind).queue
        send(job.pk, broker=self.broker, queue=django_settings.WELLCHOSEN_GPU_QUEUE if queue == "gpu" else queue)


@dataclass
class KillReport:
    """What happened, for the suite's log: progress when the kill landed and how long each part took."""

    kind: str
    done_at_kill: int
    total: int
    running_before_kill_s: float
    takeover_s: float  # from the kill to the second attempt's claim
    finish_s: float  # from the kill to the end of the job

    def __str__(self) -> str:
        share = self.done_at_kill / self.total if self.total else 0
        return (
            f"{self.kind}: killed at {self.done_at_kill}/{self.total} ({share:.0%}) after "
            f"{self.running_before_kill_s:.1f} s running; taken over {self.takeover_s:.1f} s after the kill, "
            f"finished {self.finish_s:.1f} s after it"
        )


def job_progress(job_id: int) -> tuple[int, int]:
    """(done, total) as the running job last reported it: the cache always has it, the row only
    for jobs that report outside a transaction."""
    values = cache.get(job_cache_key(job_id, "progress"))
    if values:
        return values["done_count"], values["total_count"]
    job = Job.objects.get(pk=job_id)
    return job.done_count, job.total_count


def kill_mid_job_and_take_over(
    job: Job,
    cluster: Cluster,
    *,
    kill_at: float = 0.2,
    kill_when: Callable[[], bool] | None = None,
    after_kill: Callable[[], None] | None = None,
    timeout: float = HANG_GUARD_S,
) -> Job:
    """Run ``job`` on a first worker, SIGKILL it once the job reported at least ``kill_at`` of its
    work done (and not all of it) and ``kill_when()`` holds (a moment inside the job's work), call
    ``after_kill``, start a second worker and let its beat hand the job over. Returns the finished
    job; prints a KillReport."""
    first = cluster.start_worker("first")
    cluster.enqueue(job)
    deadline = time.monotonic() + timeout
    running_since = None
    while True:
        row = Job.objects.get(pk=job.pk)
        if row.is_finished:
            pytest.fail(f"{job.kind} job finished before the kill ({row.status}): give it more work\n{row.error}")
        if row.status == JobStatus.RUNNING:
            running_since = running_since or time.monotonic()
            done, total = job_progress(job.pk)
            if total and kill_at * total <= done < total and (kill_when is None or kill_when()):
                break
        if time.monotonic() > deadline:
            pytest.fail(f"{job.kind} job made no progress in {timeout} s:\n{first.log_text()}")
        time.sleep(0.05)
    first.kill()
    killed = time.monotonic()
    assert Job.objects.get(pk=job.pk).attempts == 1, "a live worker's job was taken over"
    if after_kill:
        after_kill()

    second = cluster.start_worker("second")
    while Job.objects.get(pk=job.pk).attempts < 2:
        if time.monotonic() > killed + timeout:
            pytest.fail(f"{job.kind} job was not taken over in {timeout} s:\n{second.log_text()}")
        time.sleep(0.05)
    taken_over = time.monotonic()
    finished = wait_finished(job.pk, timeout=timeout)
    report = KillReport(
        kind=job.kind,
        done_at_kill=done,
        total=total,
        running_before_kill_s=killed - running_since,
        takeover_s=taken_over - killed,
        finish_s=time.monotonic() - killed,
    )
    print(f"\n[worker-kill] {report}")
    # the first worker received the job and never finished it
    ran = [line for line in first.log_text().splitlines() if "core.tasks.run_job[" in line]
    assert ran and not any("succeeded" in line for line in ran), ran
    return finished


def assert_succeeded_once(job: Job) -> None:
    """Finished by the second attempt, the only one that may finish it, with its counts complete."""
    assert (job.status, job.attempts) == (JobStatus.SUCCEEDED, 2), job.error
    assert job.progress == 100 and job.finished_at is not None
