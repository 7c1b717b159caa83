"""A real Celery worker process consuming jobs: from a real Redis (as deployed and as `make run` embeds
it) and from kombu's filesystem broker (CELERY_BROKER_URL=filesystem://, the settings' default)."""

import time
import uuid

import pytest

from annotation.job_params import ImportDialoguesParams
from annotation.models import Question
from config.celery import app as celery_app
from core.models import Job, JobStatus
from core.services.jobs import job_create
from tests.worker_helpers import filesystem_broker, redis_broker, send, wait_finished, worker_start

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(params=[pytest.param("redis", marks=pytest.mark.redis), "filesystem"])
def worker(request, tmp_path):
    folder = tmp_path / "worker"
    folder.mkdir()
    if request.param == "redis":
        broker = redis_broker(request.getfixturevalue("redis_server").broker_url(15))
    else:
        broker = filesystem_broker(folder)
    queue = f"test-{uuid.uuid4().hex[:8]}"
    process = worker_start(broker=broker, queues=[queue], name=queue, data_dir=folder, log=tmp_path / "worker.log")
    try:
        yield broker, queue, process.log
    finally:
        process.stop()


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
