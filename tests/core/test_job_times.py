"""What a job's pages say of its times, its queue and who started it."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.job_params import ImportDialoguesParams, QualityRefreshParams
from annotation.services.quality import quality_refresh_soon
from core.models import Job, JobStatus
from core.services.jobs import job_create
from tests.factories import DatasetFactory


@pytest.fixture
def job(db):
    return job_create(params=ImportDialoguesParams(path="/x", format="jsonl", dataset="d"), enqueue=False)


def test_a_running_job_says_how_long_it_has_run(admin_client, job):
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, started_at=timezone.now() - timedelta(minutes=3))
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert 'running for <strong id="job-running">3 min 0' in page
    live = admin_client.get(reverse("job-status-json", args=[job.pk])).json()
    assert live["running"].startswith("3 min") and 180 <= live["running_seconds"] < 240


def test_a_finished_job_says_how_long_it_took_and_not_that_it_runs(admin_client, job):
    start = timezone.now() - timedelta(minutes=10)
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.SUCCEEDED, started_at=start, finished_at=start + timedelta(seconds=42)
    )
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert '<span id="job-running-line" class="muted" hidden>' in page
    assert "<dt>Took</dt><dd>42 s</dd>" in page


def test_the_jobs_list_and_page_show_the_queue(admin_client, job):
    assert '<td class="job-queue">default</td>' in admin_client.get(reverse("job-list")).content.decode()
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert '<dd id="job-queue">default</dd>' in page


def test_an_automatic_refresh_says_what_started_it(admin_client, empty_cache):
    dataset = DatasetFactory(name="auto")
    quality_refresh_soon(dataset_id=dataset.pk)
    job = Job.objects.get(kind=QualityRefreshParams.kind)
    assert job.trigger == "automatically, after new scores"
    listed = admin_client.get(reverse("job-list")).content.decode()
    assert "<td>automatically, after new scores</td>" in listed and "command line" not in listed
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "by automatically, after new scores</dd>" in page


def test_a_job_from_the_command_line_says_so(admin_client, job):
    assert "<td>command line</td>" in admin_client.get(reverse("job-list")).content.decode()


def test_the_workspace_step_shows_when_its_job_finished(admin_client, db):
    from annotation.services.dialogue_import import dialogues_import  # noqa: F401  (the step's kind)

    dataset = DatasetFactory(name="ws-times")
    job = job_create(params=ImportDialoguesParams(path="/x", format="jsonl", dataset=dataset.name), enqueue=False)
    created = timezone.now() - timedelta(days=2)
    finished = timezone.now() - timedelta(hours=1)
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.SUCCEEDED,
        created_at=created,
        started_at=created,
        finished_at=finished,
        result={"dataset": dataset.name, "lines": 1, "questions": 1},
    )
    page = admin_client.get(reverse("dashboard-dataset", args=[dataset.name])).content.decode()
    line = page.split('class="step-job muted"')[1].split("</p>")[0]
    assert timezone.localtime(finished).strftime("%Y-%m-%d %H:%M") in line
    assert timezone.localtime(created).strftime("%Y-%m-%d %H:%M") not in line
