import pytest
from django.urls import reverse

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
    Job.objects.filter(pk=job.pk).update(progress=40, done_count=4, total_count=10)
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert 'id="job-status" class="status status-pending">pending<' in page
    assert 'value="40"' in page


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
