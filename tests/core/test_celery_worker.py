"""A real Celery worker process consuming jobs: from the real Redis at 127.0.0.1:6379 (as deployed)
and from kombu's filesystem broker (as `make run` uses it)."""

import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.db import connection

from annotation.job_params import ImportDialoguesParams
from annotation.models import Question
from config.celery import app as celery_app
from core.models import Job, JobStatus
from core.services.jobs import job_create
from core.tasks import run_job
from tests.reachable import REDIS_HOST, REDIS_PORT, redis_reachable

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def database_url() -> str:
    """The test database as a URL, so that the worker process writes where this test reads."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    return f"postgres://{s['USER'] or ''}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@dataclass
class Broker:
    url: str
    transport_options: dict


@pytest.fixture(params=[pytest.param("redis", marks=pytest.mark.redis), "filesystem"])
def worker(request, tmp_path):
    if request.param == "redis":
        if not redis_reachable():
            pytest.skip(f"Redis is not reachable at {REDIS_HOST}:{REDIS_PORT}")
        broker = Broker(f"redis://{REDIS_HOST}:{REDIS_PORT}/15", {})
    else:
        # the spool folders that the local settings derive from WELLCHOSEN_DATA_DIR
        spool = tmp_path / "worker" / "broker"
        for folder in ("queue", "control"):
            (spool / folder).mkdir(parents=True)
        broker = Broker(
            "filesystem://",
            {
                "data_folder_in": str(spool / "queue"),
                "data_folder_out": str(spool / "queue"),
                "control_folder": str(spool / "control"),
                "store_processed": False,
            },
        )
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker.url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "WELLCHOSEN_DATA_DIR": str(tmp_path / "worker"),
    }
    log = open(tmp_path / "worker.log", "w+")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            queue,
            "--pool=solo",
            "--concurrency=1",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"{queue}@%h",
            "--loglevel=INFO",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while "ready." not in (tmp_path / "worker.log").read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"worker did not start:\n{(tmp_path / 'worker.log').read_text()}")
        time.sleep(0.2)
    try:
        yield broker, queue, tmp_path / "worker.log"
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def send(job_id: int, *, broker: Broker, queue: str) -> None:
    with celery_app.connection_for_write(broker.url, transport_options=broker.transport_options) as conn:
        run_job.apply_async(args=[job_id], connection=conn, queue=queue)


def wait_finished(job_id: int, timeout: float = 60) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.objects.get(pk=job_id)
        if job.is_finished:
            return job
        time.sleep(0.2)
    pytest.fail(f"job {job_id} did not finish: {Job.objects.get(pk=job_id).status}")


def test_worker_runs_an_import_job_sent_through_redis_exactly_once(worker, tmp_path, monkeypatch):
    # given a real worker on a Redis queue and an import job
    broker, queue, log = worker
    monkeypatch.setitem(celery_app.conf, "task_always_eager", False)
    path = tmp_path / "d.txt"
    path.write_text(
        "Hi . __eou__ Hello . __eou__ Lunch ? __eou__ Sure . __eou__\n" * 1
        + "Rain ? __eou__ Yes . __eou__ Umbrella ? __eou__ Got one . __eou__\n"
    )
    job = job_create(
        params=ImportDialoguesParams(path=str(path), format="dailydialog", dataset="via-worker"), enqueue=False
    )
    # when its message is delivered twice (as a broker may redeliver)
    send(job.pk, broker=broker, queue=queue)
    send(job.pk, broker=broker, queue=queue)
    # then the worker process ran it once and recorded the result
    job = wait_finished(job.pk)
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.result["questions"] == 2 and job.attempts == 1
    time.sleep(1)  # let the duplicate message be consumed too
    assert Question.objects.filter(dataset__name="via-worker").count() == 2
    assert Job.objects.get(pk=job.pk).attempts == 1
    # and it was the worker process, not this one, that received both messages
    assert log.read_text().count("Task core.tasks.run_job[") >= 2


def test_worker_records_a_failing_job(worker, tmp_path, monkeypatch):
    broker, queue, log = worker
    monkeypatch.setitem(celery_app.conf, "task_always_eager", False)
    path = tmp_path / "bad.txt"
    path.write_bytes(b"Hi . __eou__ caf\xe9 . __eou__ a __eou__ b __eou__\n")
    job = job_create(params=ImportDialoguesParams(path=str(path), format="dailydialog", dataset="bad"), enqueue=False)
    send(job.pk, broker=broker, queue=queue)
    job = wait_finished(job.pk)
    assert job.status == JobStatus.FAILED
    assert "bad.txt, line 1, field turn 2: undecodable bytes" in job.error
    assert "core.tasks.run_job" in log.read_text()
