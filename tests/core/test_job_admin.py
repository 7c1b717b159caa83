from django.urls import reverse

from annotation.job_params import BuildTestsetParams
from core.models import JobStatus
from core.services.jobs import job_create


def test_resend_action_runs_a_pending_job_whose_message_was_lost(admin_client, django_capture_on_commit_callbacks):
    # given a job created while the broker was down (its message never sent)
    job = job_create(params=BuildTestsetParams(dataset="missing", name="x"), enqueue=False)
    # when a researcher re-sends it from the job list
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(reverse("admin:core_job_changelist"), {"action": "resend_jobs", "_selected_action": [job.pk]})
    # then a worker ran it
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.error == "no dataset 'missing'"
