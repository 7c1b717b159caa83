from django.urls import reverse

from core.models import JobShard, JobShardStatus, JobStatus
from core.selectors import jobs_waits
from core.services.jobs import job_create
from testsets.job_params import BuildTestsetParams


def test_resend_action_runs_a_pending_job_whose_message_was_lost(admin_client, django_capture_on_commit_callbacks):
    # given a job created while the broker was down (its message never sent)
    job = job_create(params=BuildTestsetParams(dataset="missing", name="x"), enqueue=False)
    # when a researcher re-sends it from the job list
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(reverse("admin:core_job_changelist"), {"action": "resend_jobs", "_selected_action": [job.pk]})
    # then a worker ran it
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.error == "no dataset 'missing'"


def test_a_resent_job_waits_behind_the_jobs_queued_before_it_was_sent_again(admin_client):
    # given a job whose message was lost, and a job queued after it
    lost = job_create(params=BuildTestsetParams(dataset="missing", name="x"), enqueue=False)
    later = job_create(params=BuildTestsetParams(dataset="missing", name="y"), enqueue=False)
    # when a researcher re-sends the first one
    admin_client.post(reverse("admin:core_job_changelist"), {"action": "resend_jobs", "_selected_action": [lost.pk]})
    # then its message is at the end of the queue, and its page says it waits behind the other job
    lost.refresh_from_db()
    assert [ahead.id for ahead in jobs_waits(jobs=[lost])[lost.pk].ahead] == [later.pk]


def test_the_job_admin_shows_its_shards_read_only(admin_client):
    # given a job with two shards, one claimed by a worker
    job = job_create(params=BuildTestsetParams(dataset="missing", name="x"), enqueue=False)
    JobShard.objects.create(job=job, number=0, status=JobShardStatus.RUNNING, attempts=1, worker="host-a:41")
    JobShard.objects.create(job=job, number=1, total_count=7)
    # when a researcher opens the job in the admin
    page = admin_client.get(reverse("admin:core_job_change", args=[job.pk])).content.decode()
    # then both shards are listed with their worker, and no shard field is a form input
    assert "host-a:41" in page and 'id="shards-0"' in page and 'id="shards-1"' in page
    assert 'name="shards-0-status"' not in page and 'name="shards-0-worker"' not in page
