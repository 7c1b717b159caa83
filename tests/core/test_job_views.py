import time

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.job_params import ImportDialoguesParams, ImportScoresParams
from core.models import Job, JobStatus
from core.services.jobs import job_create
from tests.factories import UserFactory, staff_with


@pytest.fixture
def job(db):
    return job_create(params=ImportDialoguesParams(path="/x", format="jsonl", dataset="d"), enqueue=False)


def test_job_pages_are_for_staff_only(client, job):
    client.force_login(UserFactory())
    response = client.get(reverse("job-detail", args=[job.pk]))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_staff_without_the_job_permission_cannot_see_jobs(client, job):
    client.force_login(staff_with())
    assert client.get(reverse("job-detail", args=[job.pk])).status_code == 403
    assert client.get(reverse("job-list")).status_code == 403


def test_cancelling_a_job_needs_the_change_permission(client, job):
    client.force_login(staff_with("core.view_job"))
    assert client.post(reverse("job-cancel", args=[job.pk])).status_code == 403
    job.refresh_from_db()
    assert job.status == JobStatus.PENDING


def test_job_detail_shows_status_and_progress(admin_client, job):
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, started_at=timezone.now(), progress=40, done_count=4, total_count=10
    )
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert 'id="job-status" class="status status-running">running<' in page
    assert 'value="40"' in page and "4 of 10" in page


def _phases(*, running_started: float | None = None) -> list[dict]:
    base = {"failed": 0, "estimated": False}
    done = {**base, "name": "building the lexical index", "unit": "utterances", "done": 25794, "total": 25794}
    current = {**base, "name": "retrieving candidates", "unit": "questions", "done": 40, "total": 100}
    if running_started is None:
        return [{**done, "seconds": 12.0}, {**current, "done": 100, "seconds": 30.0}]
    return [{**done, "seconds": 12.0}, {**current, "seconds": None, "started": running_started}]


def test_a_running_job_shows_its_earlier_phases_done_and_the_current_one_with_bar_and_eta(admin_client, job):
    # given a job 20 s into its second phase, 40 of 100 questions done (2 a second)
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, started_at=timezone.now(), phases=_phases(running_started=time.time() - 20)
    )
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    # then the first phase is listed with its final count and duration, the second with a bar and its ETA
    assert "building the lexical index" in page and "25,794 of 25,794 utterances" in page and "12 s" in page
    assert '<li class="phase phase-running">' in page and 'value="40"' in page and "40 of 100 questions" in page
    assert 'about <strong id="job-eta">30 s</strong> left' in page


def test_status_json_has_the_phases_and_the_eta(admin_client, job):
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, started_at=timezone.now(), phases=_phases(running_started=time.time() - 20)
    )
    data = admin_client.get(reverse("job-status-json", args=[job.pk])).json()
    assert [p["name"] for p in data["phases"]] == ["building the lexical index", "retrieving candidates"]
    assert [p["running"] for p in data["phases"]] == [False, True]
    assert data["phases"][1]["counts_text"] == "40 of 100 questions"
    assert 29 <= data["eta_seconds"] <= 31 and data["eta"] == "30 s"
    assert data["unit"] == "questions"
    assert (data["summary"], data["next_step"]) == ("", None)  # not finished


def test_a_finished_job_page_shows_the_summary_the_next_step_the_result_table_and_json_in_details(admin_client, job):
    # given a successful dialogue import
    result = {
        "format": "jsonl",
        "dataset": "d",
        "lines": 100,
        "questions": 92,
        "skipped_blank": 8,
        "accuracy": 0.12121212,
    }
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.SUCCEEDED,
        started_at=timezone.now(),
        finished_at=timezone.now(),
        result=result,
        phases=_phases(),
    )
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "Imported 92 questions into dataset d from x (100 lines); 8 lines skipped (8 blank)." in page
    assert f'id="job-next" href="{reverse("dashboard-dataset", args=["d"])}"' in page
    assert '<th>Accuracy</th><td class="num">0.121</td>' in page
    details = page[page.index('<details class="raw"') : page.index("</details>")]
    assert "&quot;accuracy&quot;: 0.12121212" in details
    assert "0.12121212" not in page.replace(details, "")
    assert "phase-running" not in page and "100 of 100 questions" in page


def test_status_json_of_a_finished_job_has_its_summary_and_next_step(admin_client, job):
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.SUCCEEDED, result={"dataset": "d", "lines": 3, "questions": 3}, finished_at=timezone.now()
    )
    data = admin_client.get(reverse("job-status-json", args=[job.pk])).json()
    assert data["summary"].startswith("Imported 3 questions")
    assert data["next_step"] == {"label": "Open dataset d", "url": reverse("dashboard-dataset", args=["d"])}
    assert data["eta_seconds"] is None


def test_a_result_the_summary_cannot_read_still_shows_its_rows(admin_client, job):
    Job.objects.filter(pk=job.pk).update(status=JobStatus.SUCCEEDED, result={"odd": 1})
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "<th>Odd</th>" in page and 'id="job-summary"' not in page


def test_job_status_json_for_polling(admin_client, job):
    data = admin_client.get(reverse("job-status-json", args=[job.pk])).json()
    assert (data["status"], data["finished"], data["progress"]) == ("pending", False, 0)


def test_job_list_query_count_is_constant(admin_client, db, django_assert_max_num_queries):
    for _ in range(20):
        job_create(params=ImportScoresParams(path="/x"), enqueue=False)
    with django_assert_max_num_queries(4):
        page = admin_client.get(reverse("job-list")).content.decode()
    assert page.count("import scores") == 20


def test_cancel_button_cancels_a_pending_job(admin_client, job):
    admin_client.post(reverse("job-cancel", args=[job.pk]))
    assert Job.objects.get(pk=job.pk).status == JobStatus.CANCELLED


def test_healthz(client, db):
    assert client.get(reverse("healthz")).content == b"ok"
