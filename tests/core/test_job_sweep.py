"""Beat's sweep sends a new message for a running job whose worker died, so that no job is stranded."""

import importlib
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from core.models import Job, JobStatus, job_cache_key
from core.services.jobs import job_claim, job_create, jobs_requeue_stale
from tests.core.scripted import ScriptedParams


@pytest.fixture
def running_job(db, scripted_kind):
    """A job claimed by a worker (attempt 1)."""
    job = job_create(params=ScriptedParams(x=1), enqueue=False)
    return job_claim(job_id=job.pk)


def kill_worker(job: Job) -> None:
    """The worker stops beating: no cache heartbeat, and the row's is an hour old."""
    cache.delete(job_cache_key(job.pk, "heartbeat"))
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))


def test_a_running_job_whose_worker_died_is_sent_again(running_job, sent_tasks, django_capture_on_commit_callbacks):
    # given a running job whose worker died (and whose message is gone)
    kill_worker(running_job)
    # when beat sweeps
    with django_capture_on_commit_callbacks(execute=True):
        resent = jobs_requeue_stale()
    # then one new message went to its task's queue
    assert resent == [running_job.pk]
    assert sent_tasks == [("core.tasks.run_job", "default", [running_job.pk])]


def test_a_running_job_with_a_live_worker_is_not_sent_again(
    running_job, sent_tasks, django_capture_on_commit_callbacks
):
    # given a running job whose row beat an hour ago but whose worker beats in the cache (as
    # inside an import's transaction)
    Job.objects.filter(pk=running_job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    # when beat sweeps
    with django_capture_on_commit_callbacks(execute=True):
        resent = jobs_requeue_stale()
    # then nothing is sent
    assert resent == [] and sent_tasks == []


def test_a_job_sent_again_is_not_sent_once_more_within_the_stale_period(
    running_job, sent_tasks, django_capture_on_commit_callbacks
):
    # given a dead worker's job that one sweep already sent again (its message waits in the queue)
    kill_worker(running_job)
    with django_capture_on_commit_callbacks(execute=True):
        jobs_requeue_stale()
    # when beat sweeps again before the stale period is over
    with django_capture_on_commit_callbacks(execute=True):
        second = jobs_requeue_stale()
    # then it is not sent a second time
    assert second == []
    assert len(sent_tasks) == 1


def test_finished_and_pending_jobs_are_not_swept(db, scripted_kind, sent_tasks, django_capture_on_commit_callbacks):
    # given a pending job and a finished one, both with old rows
    old = timezone.now() - timedelta(hours=1)
    pending = job_create(params=ScriptedParams(), enqueue=False)
    done = job_create(params=ScriptedParams(), enqueue=False)
    Job.objects.filter(pk=done.pk).update(status=JobStatus.SUCCEEDED, heartbeat_at=old)
    Job.objects.filter(pk=pending.pk).update(created_at=old)
    # when beat sweeps, then neither is sent
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_requeue_stale() == []
    assert sent_tasks == []


def test_the_new_message_takes_the_job_over_and_finishes_it(
    running_job, scripted_kind, django_capture_on_commit_callbacks
):
    # given a dead worker's job, and its task running in-process (as a worker would)
    scripted_kind.handler = lambda job, progress: {"resumed": True}
    kill_worker(running_job)
    # when beat sweeps and the new message is consumed
    with django_capture_on_commit_callbacks(execute=True):
        jobs_requeue_stale()
    # then a second attempt took the job over and finished it
    running_job.refresh_from_db()
    assert (running_job.status, running_job.attempts, running_job.result) == (
        JobStatus.SUCCEEDED,
        2,
        {"resumed": True},
    )


def test_beat_sweeps_once_per_stale_period(monkeypatch):
    # given a stale period in the environment
    monkeypatch.setenv("WELLCHOSEN_JOB_STALE_AFTER", "120")
    # when the settings are read
    from config.settings import base

    schedule = importlib.reload(base).CELERY_BEAT_SCHEDULE
    # then beat runs the sweep at that interval, and the task is registered
    from config.celery import app

    assert schedule["jobs-requeue-stale"]["task"] == "core.tasks.jobs_requeue_stale_job"
    assert schedule["jobs-requeue-stale"]["schedule"] == 120.0
    assert "core.tasks.jobs_requeue_stale_job" in app.tasks
