"""A failed job's page names its cause in one sentence, folds the traceback away and offers Retry,
which sends the same job again to resume (core.services.job_retries)."""

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from annotation.job_params import ImportDialoguesParams, ImportScoresParams
from annotation.models import Question
from core.errors import UserError
from core.models import Job, JobShard, JobShardStatus, JobStatus
from core.services.job_retries import job_retry
from core.services.job_shard_claims import ShardLost, ShardProgress, job_shard_claim
from core.services.jobs import job_create, job_execute
from tests.core.scripted import ScriptedParams, ShardedParams
from tests.factories import staff_with

pytestmark = pytest.mark.django_db


def failed_job(params=None, *, error: str = "it went wrong") -> Job:
    """A job that failed with ``error`` (an import of scores, by default)."""
    job = job_create(params=params or ImportScoresParams(path="/x"), enqueue=False)
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.FAILED, error=error, attempts=1, started_at=timezone.now(), finished_at=timezone.now()
    )
    job.refresh_from_db()
    return job


def detail(client, job: Job) -> str:
    return client.get(reverse("job-detail", args=[job.pk])).content.decode()


def retrier(*extra: str):
    """A staff account that may see jobs and retry an import of scores."""
    return staff_with("core.view_job", "core.change_job", "annotation.add_score", *extra, username="retrier")


# The cause


def test_a_user_errors_message_is_the_cause_as_is_without_a_traceback(admin_client, job, execute):
    def fail(job, progress):
        raise UserError("scores.csv, line 3, field score: 7 is not a score from 0 to 4 (/data/scores.csv)")

    execute(job, fail)
    page = detail(admin_client, job)
    assert (
        '<p class="error" id="job-cause">scores.csv, line 3, field score: 7 is not a score from 0 to 4 '
        "(/data/scores.csv)</p>" in page
    )
    assert 'id="job-traceback"' not in page


def test_an_unexpected_exception_is_summed_up_with_the_kind_and_step_its_traceback_folded(admin_client, job, execute):
    # given a job that fails on a bug in its second step, with a message of two lines
    def fail(job, progress):
        progress.update(done=1, total=2, phase="scoring words", unit="words")
        raise ValueError("boom\nthe second line of the message")

    execute(job, fail)
    page = detail(admin_client, job)
    # then the cause is one sentence: unexpected, which kind and step, the class and the message's first line
    cause = 'id="job-cause">Unexpected error in scripted test job, step “scoring words”: ValueError: boom</p>'
    assert cause in page
    # and the whole error, traceback included, is folded away in a closed <details>
    folded = page[page.index('<details class="raw" id="job-traceback">') :]
    folded = folded[: folded.index("</details>")]
    assert "Traceback (most recent call last):" in folded and "the second line of the message" in folded
    assert "Traceback (most recent call last)" not in page.replace(folded, "")
    assert '<details class="raw" id="job-traceback" open' not in page


def run_failing_at(sharded_kind, item: int, *, shards: int, message: str = "an outage") -> tuple[Job, dict]:
    """A job of the sharded kind (``shards`` shards of 4 items) run here, whose work raises
    RuntimeError(``message``) at ``item`` while the returned ``outage["on"]`` holds."""
    outage = {"on": True}

    def work(job, shard, progress, current):
        if current == item and outage["on"]:
            raise RuntimeError(message)

    sharded_kind.work = work
    job = job_create(params=ShardedParams(shards=shards, size=4), enqueue=False)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    return job, outage


def test_a_shard_that_failed_unexpectedly_is_named_in_the_cause(admin_client, sharded_kind):
    job, _ = run_failing_at(sharded_kind, 9, shards=3, message="the disk is full")
    page = detail(admin_client, job)
    assert (
        'id="job-cause">Unexpected error in sharded test job, step “counting”: '
        "shard 3 of 3 failed: RuntimeError: the disk is full</p>" in page
    )
    assert 'id="job-traceback"' in page


# The button


@pytest.mark.parametrize("status", [JobStatus.PENDING, JobStatus.RUNNING, JobStatus.SUCCEEDED, JobStatus.CANCELLED])
def test_only_a_failed_job_offers_retry(client, status):
    client.force_login(retrier())
    job = failed_job()
    assert 'id="job-retry"' in detail(client, job)
    Job.objects.filter(pk=job.pk).update(status=status)
    assert 'id="job-retry"' not in detail(client, job)


@pytest.mark.parametrize(
    "permissions",
    [("core.view_job", "annotation.add_score"), ("core.view_job", "core.change_job")],
    ids=["without the jobs' change permission", "without the kind's start permission"],
)
def test_retry_is_neither_offered_nor_done_without_the_permission_to_start_that_job(
    client, permissions, sent_tasks, django_capture_on_commit_callbacks
):
    client.force_login(staff_with(*permissions))
    job = failed_job()
    assert 'id="job-retry"' not in detail(client, job)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(reverse("job-retry", args=[job.pk])).status_code == 403
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and sent_tasks == []


def test_the_retry_form_carries_a_csrf_token_and_posts_to_the_job(client):
    client.force_login(retrier())
    job = failed_job()
    page = detail(client, job)
    form = page[page.index('<form method="post" action="' + reverse("job-retry", args=[job.pk])) :]
    assert 'name="csrfmiddlewaretoken"' in form[: form.index("</form>")]


def test_a_retry_without_the_csrf_token_is_refused(client, db):
    from django.test import Client

    checked = Client(enforce_csrf_checks=True)
    checked.force_login(retrier())
    job = failed_job()
    assert checked.post(reverse("job-retry", args=[job.pk])).status_code == 403
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED


# Retrying


def test_retry_makes_the_job_pending_again_and_sends_it_once_even_when_clicked_twice(
    client, sent_tasks, django_capture_on_commit_callbacks
):
    client.force_login(retrier())
    job = failed_job(error="ValueError: boom\n\nTraceback (most recent call last):\n  ...")
    # when Retry is clicked twice
    with django_capture_on_commit_callbacks(execute=True):
        first = client.post(reverse("job-retry", args=[job.pk]))
    with django_capture_on_commit_callbacks(execute=True):
        second = client.post(reverse("job-retry", args=[job.pk]), follow=True)
    # then the job is pending again, its error cleared, and it was sent to its queue once
    assert first.status_code == 302 and first["Location"] == reverse("job-detail", args=[job.pk])
    job.refresh_from_db()
    assert (job.status, job.error, job.finished_at, job.attempts) == (JobStatus.PENDING, "", None, 1)
    assert sent_tasks == [("core.tasks.run_job", "default", [job.pk])]
    assert "is no longer failed" in second.content.decode()


def test_the_service_retries_a_failed_job_once(sent_tasks, django_capture_on_commit_callbacks):
    job, user = failed_job(), retrier()
    with django_capture_on_commit_callbacks(execute=True):
        assert job_retry(job_id=job.pk, user=user) is True
        assert job_retry(job_id=job.pk, user=user) is False
    assert len(sent_tasks) == 1


def test_the_service_refuses_a_user_who_may_not_start_the_kind():
    job = failed_job()
    with pytest.raises(PermissionDenied):
        job_retry(job_id=job.pk, user=staff_with("core.change_job"))


def test_retrying_a_job_of_a_kind_no_app_declares_is_a_bad_request(client):
    client.force_login(retrier())
    job = failed_job()
    Job.objects.filter(pk=job.pk).update(kind="gone_kind")
    response = client.post(reverse("job-retry", args=[job.pk]))
    assert response.status_code == 400 and "unknown job kind 'gone_kind'" in response.content.decode()


@pytest.mark.parametrize("job_id", ["99999999999999999999999", "0"])
def test_retrying_a_job_that_does_not_exist_is_not_found(client, job_id):
    client.force_login(retrier())
    assert client.post(f"/jobs/{job_id}/retry").status_code == 404


def test_a_retried_job_is_the_current_one_in_the_job_list(admin_client):
    job = failed_job()
    job_retry(job_id=job.pk, user=retrier())
    page = admin_client.get(reverse("job-list")).content.decode()
    assert page.count(f'href="{reverse("job-detail", args=[job.pk])}"') == 1
    assert '<span class="status status-pending">pending</span>' in page and "status-failed" not in page


def test_an_import_retried_runs_again_from_the_start_and_imports_once(write_file):
    # given a dialogue import that failed on a bad line (its transaction rolled back: nothing imported)
    good = '{"context": ["how are you today", "fine thanks"], "response": "glad to hear it"}\n'
    path = write_file("dialogues.jsonl", good + '{"context": 7, "response": "no"}\n')
    job = job_create(params=ImportDialoguesParams(path=str(path), format="jsonl", dataset="d"), enqueue=False)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "line 2" in job.error
    assert not Question.objects.exists()
    # when the file is mended and the job retried
    path.write_text(good + '{"context": ["where is the station"], "response": "left at the corner"}\n')
    job_retry(job_id=job.pk, user=staff_with("core.change_job", "annotation.add_dataset"))
    job_execute(job_id=job.pk)
    # then it ran whole, once: the same job succeeded with both questions
    job.refresh_from_db()
    assert (job.status, job.result["questions"], job.attempts) == (JobStatus.SUCCEEDED, 2, 2)
    assert Question.objects.filter(dataset__name="d").count() == 2


# Resuming a sharded job


def test_a_retried_sharded_job_runs_only_the_shards_that_had_not_succeeded(sharded_kind):
    # given a job of 4 shards whose second shard failed, its first having succeeded
    job, outage = run_failing_at(sharded_kind, 5, shards=4)
    assert job.status == JobStatus.FAILED and sharded_kind.ran == [0, 1]
    # when the outage is over and the job is retried
    outage["on"] = False
    job_retry(job_id=job.pk, user=staff_with("core.change_job"))
    job_execute(job_id=job.pk)
    # then the shards that had not succeeded ran, once each, and the finished one not again
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert sharded_kind.ran == [0, 1, 1, 2, 3] and sharded_kind.plans == 1
    shards = JobShard.objects.filter(job=job).order_by("number")
    assert [(s.status, s.attempts) for s in shards] == [(JobShardStatus.SUCCEEDED, 1)] + [
        (JobShardStatus.SUCCEEDED, n) for n in (2, 1, 1)
    ]
    # and its result is that of a job run in one piece
    whole = job_create(params=ShardedParams(shards=4, size=4), enqueue=False)
    job_execute(job_id=whole.pk)
    whole.refresh_from_db()
    assert job.result == whole.result == {"items": 16, "shards": 4}


@pytest.mark.django_db(transaction=True)  # a shard's report writes its row only outside a transaction
def test_a_shard_still_held_by_the_failed_attempt_is_run_again_and_its_old_worker_stops(sharded_kind, sent_tasks):
    # given a failed job whose shard 0 is still marked running by the worker of the failed attempt
    job = job_create(params=ShardedParams(shards=2, size=1), enqueue=False)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.FAILED, attempts=1, error="shard 2 of 2 failed: x")
    for number in range(2):
        JobShard.objects.create(job=job, number=number, params={"first": number, "last": number}, total_count=1)
    held = job_shard_claim(job_id=job.pk, number=0)
    JobShard.objects.filter(job=job, number=1).update(status=JobShardStatus.FAILED, attempts=1, error="x")
    # when the job is retried
    job_retry(job_id=job.pk, user=staff_with("core.change_job"))
    # then both shards are pending again, and the old attempt's next report tells it the shard is lost
    assert set(JobShard.objects.filter(job=job).values_list("status", flat=True)) == {JobShardStatus.PENDING}
    with pytest.raises(ShardLost):
        ShardProgress(held).update(done=1, total=1, force=True)
    # and the retried job, sent once, runs both
    assert sent_tasks == [("core.tasks.run_job", "default", [job.pk])]
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and sorted(sharded_kind.ran) == [0, 1]


def test_a_failed_sharded_job_page_says_that_retry_keeps_its_finished_shards(client, sharded_kind):
    job, _ = run_failing_at(sharded_kind, 5, shards=3)
    client.force_login(staff_with("core.view_job", "core.change_job"))
    assert "It resumes: the 1 finished shard of 3 is kept." in detail(client, job)


def test_the_scripted_kind_needs_only_the_jobs_change_permission(client, job, execute):
    # a kind without a start permission (ScriptedParams) is retried with the jobs' own permission
    assert ScriptedParams.start_permission is None

    def fail(job, progress):
        raise UserError("no")

    execute(job, fail)
    client.force_login(staff_with("core.view_job", "core.change_job"))
    assert 'id="job-retry"' in detail(client, job)
