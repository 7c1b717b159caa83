from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from annotation.models import Dataset
from core.errors import UserError
from core.models import Job, JobStatus, job_cache_key
from core.services.jobs import JobProgress, job_cancel, job_claim, job_create
from testsets.job_params import BuildTestsetParams


def test_a_successful_job_records_its_result_and_times(job, execute):
    execute(job, lambda j, p: {"questions": 3})
    job.refresh_from_db()
    assert (job.status, job.result, job.progress, job.attempts) == (JobStatus.SUCCEEDED, {"questions": 3}, 100, 1)
    assert job.started_at <= job.finished_at


def test_a_finished_job_is_not_run_again(job, execute):
    # given a job that ran once
    calls = []
    execute(job, lambda j, p: calls.append(1) or {})
    # when its message is delivered again (a retry or a duplicate)
    execute(job, lambda j, p: calls.append(2) or {})
    # then the second delivery does nothing
    assert calls == [1]
    assert Job.objects.get(pk=job.pk).attempts == 1


def test_a_user_error_fails_the_job_with_its_message(job, execute):
    def handler(j, p):
        raise UserError("t.tsv, line 3: bad")

    execute(job, handler)
    job.refresh_from_db()
    assert (job.status, job.error) == (JobStatus.FAILED, "t.tsv, line 3: bad")


def test_an_unexpected_exception_fails_the_job_with_a_traceback(job, execute):
    def handler(j, p):
        raise KeyError("boom")

    execute(job, handler)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert job.error.startswith("KeyError: 'boom'") and "Traceback" in job.error


def test_cancelling_a_pending_job_means_it_never_runs(job, execute):
    job_cancel(job_id=job.pk)
    execute(job, lambda j, p: pytest.fail("must not run"))
    assert Job.objects.get(pk=job.pk).status == JobStatus.CANCELLED


def test_cancelling_a_running_job_stops_it_and_rolls_its_work_back(job, execute):
    # given a job that writes inside a transaction and reports progress
    def handler(j, progress: JobProgress):
        with transaction.atomic():
            Dataset.objects.create(name="half-done")
            job_cancel(job_id=j.pk)  # a researcher clicks "cancel" meanwhile
            progress.update(done=1, total=10, force=True)
        return {}

    # when it runs
    execute(job, handler)
    # then it is cancelled and nothing it wrote was kept
    assert Job.objects.get(pk=job.pk).status == JobStatus.CANCELLED
    assert not Dataset.objects.filter(name="half-done").exists()


def test_progress_inside_a_transaction_goes_to_the_cache(job, execute):
    def handler(j, progress):
        with transaction.atomic():
            progress.update(done=5, total=20, force=True)
            assert cache.get(job_cache_key(j.pk, "progress"))["progress"] == 25
        return {}

    execute(job, handler)
    job.refresh_from_db()
    # the total reached the row only through the cache; a finished job counts everything done
    assert (job.done_count, job.total_count, job.progress) == (20, 20, 100)


def test_a_running_job_with_a_live_worker_is_not_taken_over(job):
    assert job_claim(job_id=job.pk) is not None
    assert job_claim(job_id=job.pk) is None


def test_a_running_job_whose_worker_died_is_taken_over(job, settings):
    # given a job claimed by a worker that stopped reporting long ago
    job_claim(job_id=job.pk)
    cache.delete(job_cache_key(job.pk, "heartbeat"))
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    # when its message is redelivered
    taken = job_claim(job_id=job.pk)
    # then a new attempt takes it over
    assert taken is not None and taken.attempts == 2


@pytest.fixture(params=["locmem", pytest.param("redis", marks=pytest.mark.redis)])
def job_cache(request, settings):
    """The cache that carries heartbeats: in-process, and the real Redis as deployed (REDIS_CACHE_URL)."""
    if request.param == "redis":
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": request.getfixturevalue("redis_server").url(14),
            }
        }
    yield request.param
    cache.clear()


def test_a_job_that_reports_no_progress_for_longer_than_the_stale_limit_is_not_taken_over(
    job, settings, job_cache, execute
):
    # given a stale limit of 1 s and a handler that works 1.6 s without reporting progress
    # (as while a model loads), during which its message is redelivered
    import time

    settings.WELLCHOSEN_JOB_STALE_AFTER = 1
    claims = []

    def handler(j, p):
        time.sleep(1.6)
        claims.append(job_claim(job_id=j.pk))
        return {}

    # when it runs
    execute(job, handler)
    # then the redelivery found it alive, and the one attempt finished it
    job.refresh_from_db()
    assert claims == [None]
    assert (job.status, job.attempts) == (JobStatus.SUCCEEDED, 1)


def test_the_heartbeat_stops_when_the_job_ends(job, settings, execute):
    # given a job with a beat every second that has finished
    import time

    settings.WELLCHOSEN_JOB_STALE_AFTER = 1
    execute(job, lambda j, p: {})
    # when more than a beat's interval passes, then no heartbeat was written after the end
    time.sleep(1.3)
    assert cache.get(job_cache_key(job.pk, "heartbeat")) is None


def test_job_create_enqueues_only_after_commit(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = job_create(params=BuildTestsetParams(dataset="none", name="x"))
    assert len(callbacks) == 1
    assert Job.objects.get(pk=job.pk).status == JobStatus.PENDING


def test_enqueued_job_runs_through_its_celery_task(db, django_capture_on_commit_callbacks):
    # given an eager Celery (test settings) and a job whose service fails on bad input
    with django_capture_on_commit_callbacks(execute=True):
        job = job_create(params=BuildTestsetParams(dataset="missing", name="x"))
    # then the task ran the service and recorded its error on the job
    job.refresh_from_db()
    assert (job.status, job.error) == (JobStatus.FAILED, "no dataset 'missing'")


def test_each_named_phase_is_recorded_with_its_own_counts_unit_and_duration(job, execute):
    # given a job of two phases, the second one's last report throttled (not forced)
    def handler(j, progress: JobProgress):
        progress.update(done=0, total=3, phase="building the lexical index", unit="utterances")
        progress.update(done=3, total=3, force=True)
        progress.update(done=1, total=2, phase="retrieving candidates", unit="questions")
        progress.update(done=2, total=2, failed=1)
        return {}

    execute(job, handler)
    job.refresh_from_db()
    # then both phases are kept in order, with their final counts and a duration each
    assert [(p["name"], p["unit"], p["done"], p["total"], p["failed"]) for p in job.phases] == [
        ("building the lexical index", "utterances", 3, 3, 0),
        ("retrieving candidates", "questions", 2, 2, 1),
    ]
    assert all(p["seconds"] is not None and p["seconds"] >= 0 and "started" not in p for p in job.phases)
    assert (job.phase, job.done_count, job.total_count) == ("retrieving candidates", 2, 2)


def test_while_running_the_current_phase_carries_its_start_for_the_eta(job, execute):
    def handler(j, progress: JobProgress):
        progress.update(done=1, total=4, phase="scoring", unit="questions", force=True)
        seen = Job.objects.get(pk=j.pk).phases
        assert seen[-1]["seconds"] is None and seen[-1]["started"] > 0
        return {}

    execute(job, handler)


def test_a_failed_job_keeps_its_phases_as_last_reported(job, execute):
    def handler(j, progress: JobProgress):
        progress.update(done=5, total=10, phase="reading the file", unit="lines", force=True)
        raise UserError("line 6: bad")

    execute(job, handler)
    job.refresh_from_db()
    assert [(p["name"], p["done"], p["total"]) for p in job.phases] == [("reading the file", 5, 10)]


def test_an_inner_job_reports_to_the_outer_one_under_its_own_phase_name(db, scripted_kind):
    from core.services.jobs import job_execute
    from tests.core.scripted import ScriptedParams

    outer = job_create(params=ScriptedParams(x=1), enqueue=False)
    inner = job_create(params=ScriptedParams(x=2), enqueue=False)

    def handler(j, progress: JobProgress):
        if j.pk == outer.pk:
            progress.update(done=0, total=1, phase="evaluations", unit="evaluations")
            job_execute(job_id=inner.pk, parent=progress)
            progress.update(done=1, total=1, phase="evaluations")
        else:
            progress.update(done=7, total=7, phase="scoring", unit="questions")
        return {}

    scripted_kind.handler = handler
    job_execute(job_id=outer.pk)
    names = [p["name"] for p in Job.objects.get(pk=outer.pk).phases]
    assert names == ["evaluations", f"job #{inner.pk}: scoring", "evaluations"]


@pytest.mark.parametrize(
    ("done", "total", "elapsed", "eta"),
    [(40, 100, 20.0, 30.0), (0, 100, 20.0, None), (5, 0, 20.0, None), (100, 100, 20.0, 0.0), (1, 10, 0.0, None)],
)
def test_the_eta_is_the_rest_of_the_phase_at_its_rate_so_far(done, total, elapsed, eta):
    from core.selectors import phase_eta

    assert phase_eta(done=done, total=total, elapsed=elapsed) == eta
