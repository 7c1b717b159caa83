"""Real Celery worker processes for tests: started on a broker, sent jobs, stopped or killed.

A worker runs in its own process group with the test settings (config.settings.test), writes to
the test's database (``database_url``) and consumes the queues it is given. Tests send it a job's
message with ``send`` and read the outcome from the Job row (``wait_finished``).
"""

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from config.celery import app as celery_app
from core.models import Job
from core.tasks import run_job

ROOT = Path(__file__).resolve().parents[1]
# How long a worker may take to start or to finish a job before the test fails: a guard against a
# hang, never a speed limit (a busy machine is slow).
HANG_GUARD_S = 900


def database_url() -> str:
    """The test database as a URL, so that a worker process writes where the test reads."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    return postgres_url(s, s["NAME"])


def postgres_url(settings_dict: dict, database: str) -> str:
    """A URL of ``database`` on the server of a PostgreSQL connection's settings. A host that is a
    socket's folder (the embedded PostgreSQL) is percent-encoded, as dj-database-url and libpq read it."""
    host = quote(settings_dict["HOST"] or "127.0.0.1", safe="")
    return f"postgres://{settings_dict['USER'] or ''}@{host}:{settings_dict['PORT'] or 5432}/{database}"


@dataclass
class Broker:
    url: str
    transport_options: dict
    env: dict = field(default_factory=dict)  # what a worker's settings need to reach it


def filesystem_broker(folder: Path) -> Broker:
    """kombu's filesystem broker in ``folder`` (the spool that the settings derive from
    WELLCHOSEN_DATA_DIR=``folder``), as `make run` uses it."""
    spool = folder / "broker"
    for name in ("queue", "control"):
        (spool / name).mkdir(parents=True, exist_ok=True)
    options = {
        "data_folder_in": str(spool / "queue"),
        "data_folder_out": str(spool / "queue"),
        "control_folder": str(spool / "control"),
        "store_processed": False,
    }
    return Broker("filesystem://", options)


def redis_broker(url: str, *, key_prefix: str = "") -> Broker:
    """A Redis broker; with ``key_prefix`` every queue lives under keys of its own, so that
    workers may consume the deployed queue names ("default", "gpu") beside other test runs."""
    options = {"global_keyprefix": key_prefix} if key_prefix else {}
    env = {"WELLCHOSEN_TEST_BROKER_PREFIX": key_prefix} if key_prefix else {}
    return Broker(url, options, env)


@dataclass
class Worker:
    process: subprocess.Popen
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL the worker and every process it started (an out-of-memory kill, a lost machine)."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        """Ask for a warm shutdown; kill what is still there after 30 s."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def worker_start(
    *,
    broker: Broker,
    queues: list[str],
    name: str,
    data_dir: Path,
    log: Path,
    env: dict | None = None,
    beat: bool = False,
) -> Worker:
    """Start ``celery worker`` (solo pool) and wait until it is ready to consume ``queues``.

    ``beat``: run Celery beat inside it (-B, as `make run` does), with its own schedule file.
    ``env``: more environment variables for its settings."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker.url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "WELLCHOSEN_DATA_DIR": str(data_dir),
        **broker.env,
        **(env or {}),
    }
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "-Q",
        ",".join(queues),
        "--pool=solo",
        "--concurrency=1",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "-n",
        f"{name}@%h",
        "--loglevel=INFO",
    ]
    if beat:
        command += ["-B", "--schedule-filename", str(log.with_suffix(".beat-schedule"))]
    with open(log, "w") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    worker = Worker(process, log)
    deadline = time.monotonic() + HANG_GUARD_S
    while "ready." not in worker.log_text():
        if process.poll() is not None or time.monotonic() > deadline:
            if process.poll() is None:
                worker.kill()
            pytest.fail(f"worker {name} did not start:\n{worker.log_text()}")
        time.sleep(0.2)
    return worker


def send(job_id: int, *, broker: Broker, queue: str) -> None:
    """Send the job's message as job_enqueue would, through ``broker``."""
    with celery_app.connection_for_write(broker.url, transport_options=broker.transport_options) as conn:
        run_job.apply_async(args=[job_id], connection=conn, queue=queue)


def wait_finished(job_id: int, timeout: float = HANG_GUARD_S) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.objects.get(pk=job_id)
        if job.is_finished:
            return job
        time.sleep(0.2)
    pytest.fail(f"job {job_id} did not finish in {timeout} s: {Job.objects.get(pk=job_id).status}")


def assert_shards_once_on_every_worker(job: Job, workers: list, *, count: int) -> None:
    """The sharded job succeeded, its ``count`` shards each ran once, and every worker process
    (none of them this test's own) ran some of them."""
    from core.models import JobShard, JobShardStatus, JobStatus

    logs = "\n".join(w.log_text()[-3000:] for w in workers)
    assert job.status == JobStatus.SUCCEEDED, f"{job.error}\n{logs}"
    shards = JobShard.objects.filter(job=job)
    assert shards.count() == count
    assert set(shards.values_list("status", "attempts")) == {(JobShardStatus.SUCCEEDED, 1)}
    pids = {int(worker.split(":")[-1]) for worker in shards.values_list("worker", flat=True)}
    assert pids == {w.process.pid for w in workers}, f"shards ran on {pids} only\n{logs}"
    assert pids != {os.getpid()}


@dataclass
class WorkerPair:
    """Two worker processes on a queue of their own (``two_workers``)."""

    workers: list[Worker]
    broker: Broker
    queue: str

    def run(self, job: Job, *, timeout: float = HANG_GUARD_S) -> Job:
        """Send the job's message to the pair and return the job once it has finished."""
        send(job.pk, broker=self.broker, queue=self.queue)
        return wait_finished(job.pk, timeout=timeout)


@contextmanager
def two_workers(*, tmp_path: Path, data_dir: Path, monkeypatch, env: dict[str, str]) -> Iterator[WorkerPair]:
    """Two worker processes on a new queue of the filesystem broker in ``data_dir``, which the gpu
    queue setting names (every sharded kind of the tests runs there), with ``env`` for their
    settings; jobs go to them instead of running here. Both stopped at exit."""
    monkeypatch.setitem(celery_app.conf, "task_always_eager", False)  # messages go to the workers
    broker = filesystem_broker(data_dir)
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = {**env, "WELLCHOSEN_GPU_QUEUE": queue}
    workers = [
        worker_start(broker=broker, queues=[queue], name=name, data_dir=data_dir, log=tmp_path / f"{name}.log", env=env)
        for name in (f"one-{queue}", f"two-{queue}")
    ]
    try:
        yield WorkerPair(workers=workers, broker=broker, queue=queue)
    finally:
        for worker in workers:
            worker.stop()
