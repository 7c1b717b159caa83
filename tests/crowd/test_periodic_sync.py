"""The periodic crowd sync: Celery beat's task starts one sync job per published batch, never a
second one while a sync of that batch is queued or running."""

import importlib
from datetime import timedelta

from django.utils import timezone

from core.models import Job, JobStatus
from crowd.job_params import CrowdSyncParams
from crowd.services.batches import crowd_batch_create
from crowd.tasks import crowd_sync_due_job


def make_batch(dataset, name: str, status: str):
    batch = crowd_batch_create(dataset=dataset, provider="link", name=name)
    batch.status = status
    batch.save()
    return batch


def sync_jobs(batch) -> list[Job]:
    return list(Job.objects.filter(kind=CrowdSyncParams.kind, params__batch_id=batch.pk))


def test_the_beat_task_starts_one_sync_job_per_published_batch(dataset, django_capture_on_commit_callbacks):
    # given two published batches
    first = make_batch(dataset, "one", "published")
    second = make_batch(dataset, "two", "published")
    # when the beat task runs (and its jobs run, eagerly)
    with django_capture_on_commit_callbacks(execute=True):
        crowd_sync_due_job.delay()
    # then each batch got exactly one sync job, which ran
    assert [j.status for j in sync_jobs(first)] == [JobStatus.SUCCEEDED]
    assert [j.status for j in sync_jobs(second)] == [JobStatus.SUCCEEDED]


def test_a_batch_whose_sync_is_queued_gets_no_second_job(dataset):
    # given a published batch whose sync job is still waiting for a worker
    batch = make_batch(dataset, "busy", "published")
    Job.objects.create(kind=CrowdSyncParams.kind, params={"batch_id": batch.pk})
    # when the beat task runs
    crowd_sync_due_job()
    # then no second job was made
    assert len(sync_jobs(batch)) == 1


def test_a_batch_whose_sync_is_running_gets_no_second_job(dataset):
    # given a published batch whose sync job is running (heartbeat just now)
    batch = make_batch(dataset, "running", "published")
    Job.objects.create(
        kind=CrowdSyncParams.kind, params={"batch_id": batch.pk}, status=JobStatus.RUNNING, heartbeat_at=timezone.now()
    )
    # when the beat task runs
    crowd_sync_due_job()
    # then no second job was made
    assert len(sync_jobs(batch)) == 1


def test_a_sync_job_silent_for_over_an_hour_does_not_block_the_batch(dataset):
    # given a published batch whose sync job has shown no sign of life for two hours (a lost message)
    batch = make_batch(dataset, "lost", "published")
    stuck = Job.objects.create(kind=CrowdSyncParams.kind, params={"batch_id": batch.pk})
    Job.objects.filter(pk=stuck.pk).update(created_at=timezone.now() - timedelta(hours=2))
    # when the beat task runs
    crowd_sync_due_job()
    # then a fresh sync job was started
    assert len(sync_jobs(batch)) == 2


def test_a_finished_sync_does_not_hold_back_the_next_one(dataset):
    # given a published batch synced before
    batch = make_batch(dataset, "synced", "published")
    Job.objects.create(kind=CrowdSyncParams.kind, params={"batch_id": batch.pk}, status=JobStatus.SUCCEEDED)
    # when the beat task runs
    crowd_sync_due_job()
    # then a new sync job was started
    assert len(sync_jobs(batch)) == 2


def test_closed_expired_and_draft_batches_are_not_synced(dataset):
    # given batches that are finished, expired or not yet published
    batches = [make_batch(dataset, status, status) for status in ("closed", "expired", "draft")]
    # when the beat task runs
    crowd_sync_due_job()
    # then none of them got a sync job
    assert [sync_jobs(b) for b in batches] == [[], [], []]


def test_the_beat_schedule_runs_the_task_every_interval_from_the_environment(monkeypatch):
    # given an interval in the environment
    monkeypatch.setenv("WELLCHOSEN_CROWD_SYNC_SECONDS", "120")
    # when the settings are read
    from config.settings import base

    schedule = importlib.reload(base).CELERY_BEAT_SCHEDULE
    # then beat runs the periodic sync at that interval
    assert schedule["crowd-sync"]["task"] == "crowd.tasks.crowd_sync_due_job"
    assert schedule["crowd-sync"]["schedule"] == 120.0


def test_the_beat_schedule_defaults_to_five_minutes(monkeypatch):
    # given no interval in the environment
    monkeypatch.delenv("WELLCHOSEN_CROWD_SYNC_SECONDS", raising=False)
    # when the settings are read
    from config.settings import base

    schedule = importlib.reload(base).CELERY_BEAT_SCHEDULE
    # then the periodic sync runs every 300 seconds
    assert schedule["crowd-sync"]["schedule"] == 300.0


def test_the_beat_task_is_registered_with_the_celery_app():
    # given the Celery application as beat loads it
    from config.celery import app

    # when its tasks are listed
    # then the scheduled task's name resolves to a task
    assert "crowd.tasks.crowd_sync_due_job" in app.tasks
