"""Sharded jobs (core.services.job_shards): planned once, claimed by one worker at a time, taken
over when their worker dies, summed into the job's progress and result, stopped by a cancel."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from core.errors import JobCancelled
from core.models import Job, JobShard, JobShardStatus, JobStatus, job_shard_cache_key
from core.selectors import job_shards_live, job_shards_totals
from core.services.job_shard_claims import ShardLost, ShardProgress, job_shard_claim, worker_identity
from core.services.job_shards import (
    ShardSpec,
    _shard_finish,
    job_shard_execute,
    job_shards_plan,
    job_shards_requeue_stale,
)
from core.services.jobs import job_cancel, job_claim, job_create, job_execute
from tests.core.scripted import ShardedParams


@pytest.fixture
def sharded_job(db, sharded_kind):
    """A pending job of the sharded kind (3 shards of 4 items), not sent to any worker."""
    return job_create(params=ShardedParams(shards=3, size=4), enqueue=False)


@pytest.fixture
def running_sharded_job(sharded_job, sharded_kind):
    """The sharded job claimed by a worker, its 3 shards planned and none claimed yet."""
    job = job_claim(job_id=sharded_job.pk)
    job_shards_plan(job=job, plan=lambda: sharded_kind.plan(ShardedParams(shards=3, size=4)))
    return job


def worker_died(shard: JobShard) -> None:
    """The shard's worker stops beating: no cache heartbeat, and the row's is an hour old."""
    cache.delete(shard.cache_key("heartbeat"))
    JobShard.objects.filter(pk=shard.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))


def test_a_sharded_job_runs_every_shard_and_merges_their_results(sharded_job, sharded_kind):
    # when the job runs with no other worker (eager mode: no shard message is sent)
    job_execute(job_id=sharded_job.pk)
    # then its worker ran each shard once and the job's result sums theirs
    job = Job.objects.get(pk=sharded_job.pk)
    assert (job.status, job.result) == (JobStatus.SUCCEEDED, {"items": 12, "shards": 3}), job.error
    assert sharded_kind.ran == [0, 1, 2]
    shards = list(JobShard.objects.filter(job=job).order_by("number"))
    assert [(s.status, s.attempts, s.done_count, s.total_count) for s in shards] == [("succeeded", 1, 4, 4)] * 3
    assert {s.worker for s in shards} == {worker_identity()}
    # and the job's last phase counts the shards' items
    assert job.phases[-1] | {"seconds": 0} == {
        "name": "counting",
        "unit": "items",
        "done": 12,
        "total": 12,
        "failed": 0,
        "estimated": False,
        "seconds": 0,
    }


def test_shards_are_planned_once_and_a_second_plan_is_not_asked_for(sharded_job, sharded_kind):
    # given a job whose shards were planned
    job = job_claim(job_id=sharded_job.pk)
    first = job_shards_plan(job=job, plan=lambda: [ShardSpec({"first": 0}), ShardSpec({"first": 5})])
    # when they are planned again (an attempt that took the job over), with another plan
    again = job_shards_plan(job=job, plan=lambda: pytest.fail("planned twice"))
    # then the rows of the first plan are kept
    assert [(s.pk, s.number, s.params) for s in again] == [(s.pk, s.number, s.params) for s in first]
    assert [s.params for s in again] == [{"first": 0}, {"first": 5}]


def test_a_shard_held_by_a_live_worker_is_not_claimed_by_another(running_sharded_job):
    # given shard 0 claimed by a worker that beats
    first = job_shard_claim(job_id=running_sharded_job.pk, number=0)
    assert (first.status, first.attempts) == (JobShardStatus.RUNNING, 1)
    # when another worker's message for shard 0 arrives, or it asks for any shard
    # then shard 0 is not taken; the next pending one is
    assert job_shard_claim(job_id=running_sharded_job.pk, number=0) is None
    assert job_shard_claim(job_id=running_sharded_job.pk).number == 1
    assert JobShard.objects.get(pk=first.pk).attempts == 1


def test_a_shard_whose_worker_died_is_taken_over(running_sharded_job):
    # given shard 0 claimed by a worker that then died
    first = job_shard_claim(job_id=running_sharded_job.pk, number=0)
    worker_died(first)
    # when another worker claims it
    taken = job_shard_claim(job_id=running_sharded_job.pk, number=0)
    # then a second attempt holds it
    assert (taken.pk, taken.status, taken.attempts) == (first.pk, JobShardStatus.RUNNING, 2)


def test_pending_shards_are_claimed_before_stale_ones(running_sharded_job):
    # given shard 0 stale and shards 1 and 2 pending
    worker_died(job_shard_claim(job_id=running_sharded_job.pk, number=0))
    # when a worker asks for any shard, three times
    numbers = [job_shard_claim(job_id=running_sharded_job.pk).number for _ in range(3)]
    # then it gets the pending ones first, then the stale one
    assert numbers == [1, 2, 0]
    assert job_shard_claim(job_id=running_sharded_job.pk) is None


@pytest.mark.django_db(transaction=True)  # reports write the row only outside a transaction
def test_only_the_attempt_that_claimed_a_shard_finishes_it(running_sharded_job):
    # given shard 0 taken over from a worker thought dead, which was only slow
    slow = job_shard_claim(job_id=running_sharded_job.pk, number=0)
    worker_died(slow)
    job_shard_claim(job_id=running_sharded_job.pk, number=0)
    # when the slow attempt reports progress, then it learns it lost the shard
    with pytest.raises(ShardLost):
        ShardProgress(slow).update(done=1, total=4, force=True)
    # and when it tries to finish the shard, the row stays the new attempt's
    _shard_finish(slow, ShardProgress(slow), status=JobShardStatus.SUCCEEDED, result={"items": 4})
    row = JobShard.objects.get(pk=slow.pk)
    assert (row.status, row.attempts, row.result) == (JobShardStatus.RUNNING, 2, {})


def test_a_job_taken_over_keeps_its_finished_shards_and_runs_the_rest(sharded_job, sharded_kind):
    # given a job whose first attempt planned the shards, finished shard 0 and died inside shard 1
    job = job_claim(job_id=sharded_job.pk)
    job_shards_plan(job=job, plan=lambda: sharded_kind.plan(ShardedParams(shards=3, size=4)))
    JobShard.objects.filter(job=job, number=0).update(
        status=JobShardStatus.SUCCEEDED, attempts=1, done_count=4, result={"items": 4}
    )
    worker_died(job_shard_claim(job_id=job.pk, number=1))
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    cache.clear()
    # when a second attempt takes the job over
    job_execute(job_id=job.pk)
    # then it ran the other shards only (the stale one after the pending one), and the result counts all
    job.refresh_from_db()
    assert (job.status, job.attempts, job.result) == (JobStatus.SUCCEEDED, 2, {"items": 12, "shards": 3})
    assert sharded_kind.plans == 1 and sharded_kind.ran == [2, 1]
    assert list(JobShard.objects.filter(job=job).order_by("number").values_list("attempts", flat=True)) == [1, 2, 1]


def test_a_failed_shard_fails_the_job_with_its_error(sharded_job, sharded_kind):
    # given a shard whose work raises on one item
    def work(job, shard, progress, item):
        if item == 6:
            raise KeyError("item 6")

    sharded_kind.work = work
    # when the job runs
    job_execute(job_id=sharded_job.pk)
    # then that shard failed with the trace, the job with it, and the shard after it never ran
    job = Job.objects.get(pk=sharded_job.pk)
    shard = JobShard.objects.get(job=job, number=1)
    assert shard.status == JobShardStatus.FAILED and shard.error.startswith("KeyError: 'item 6'")
    assert job.status == JobStatus.FAILED and job.error.startswith("shard 2 of 3 failed: KeyError: 'item 6'")
    assert JobShard.objects.get(job=job, number=2).status == JobShardStatus.PENDING


def test_cancel_stops_a_sharded_job_at_its_shards_next_report(sharded_job, sharded_kind):
    # given a researcher who cancels the job while shard 1 (items 4 to 7) works on its second item
    def work(job, shard, progress, item):
        if item == 5:
            job_cancel(job_id=job.pk)

    sharded_kind.work = work
    # when the job runs
    job_execute(job_id=sharded_job.pk)
    # then shard 1 stopped at the report of that item and the job is cancelled; shard 2 never ran
    job = Job.objects.get(pk=sharded_job.pk)
    assert job.status == JobStatus.CANCELLED
    shard = JobShard.objects.get(job=job, number=1)
    assert (shard.status, shard.done_count) == (JobShardStatus.FAILED, 2) and "cancelled" in shard.error
    assert sharded_kind.ran == [0, 1]


def test_a_shard_on_another_worker_stops_once_the_job_is_cancelled(running_sharded_job, sharded_kind):
    # given a shard run by a helper worker (its message), and a cancel of the job meanwhile
    sharded_kind.work = lambda job, shard, progress, item: item == 1 and job_cancel(job_id=job.pk)
    # when the helper runs it
    job_shard_execute(job_id=running_sharded_job.pk, number=0)
    # then it stopped and said why; a later message for the job runs nothing
    shard = JobShard.objects.get(job=running_sharded_job, number=0)
    assert shard.status == JobShardStatus.FAILED and "cancelled" in shard.error
    job_shard_execute(job_id=running_sharded_job.pk, number=1)
    assert sharded_kind.ran == [0]


def test_a_helpers_message_runs_its_shard_or_else_the_first_pending_one(running_sharded_job, sharded_kind):
    # given shard 1 held by a live worker
    job_shard_claim(job_id=running_sharded_job.pk, number=1)
    # when a helper takes the messages of shards 1 and 2
    job_shard_execute(job_id=running_sharded_job.pk, number=1)
    job_shard_execute(job_id=running_sharded_job.pk, number=2)
    # then it ran shard 0 for the first (shard 1 is taken) and shard 2 for the second
    assert sharded_kind.ran == [0, 2]
    done = JobShard.objects.filter(job=running_sharded_job, status=JobShardStatus.SUCCEEDED)
    assert sorted(done.values_list("number", flat=True)) == [0, 2]


def test_a_message_for_a_job_that_is_not_running_does_nothing(sharded_job, sharded_kind):
    # given a finished sharded job
    job_execute(job_id=sharded_job.pk)
    sharded_kind.ran.clear()
    # when a late shard message arrives, then nothing runs
    job_shard_execute(job_id=sharded_job.pk, number=0)
    assert sharded_kind.ran == []


def test_the_shards_messages_go_to_the_jobs_queue_once_the_plan_is_committed(
    sharded_job, sharded_kind, sent_shard_tasks, django_capture_on_commit_callbacks
):
    # given a worker whose message broker works (not eager)
    # when it runs the job
    with django_capture_on_commit_callbacks(execute=True):
        job_execute(job_id=sharded_job.pk)
    # then one message per shard went to the job's queue (each found its shard done: its own worker ran all)
    assert sent_shard_tasks == [("core.tasks.run_job_shard", "default", [sharded_job.pk, n, ""]) for n in range(3)]
    assert Job.objects.get(pk=sharded_job.pk).status == JobStatus.SUCCEEDED


def test_progress_sums_the_shards_with_the_running_ones_as_last_reported(running_sharded_job):
    # given shard 0 done, shard 1 running inside a transaction (its counts in the cache only), shard 2 pending
    job = running_sharded_job
    JobShard.objects.filter(job=job, number=0).update(status=JobShardStatus.SUCCEEDED, attempts=1, done_count=4)
    running = job_shard_claim(job_id=job.pk, number=1)
    cache.set(
        job_shard_cache_key(job.pk, 1, "progress", stage=""),
        {"done_count": 3, "total_count": 4, "failed_count": 1},
        timeout=60,
    )
    # when the job's progress is read
    shards = job_shards_live(job_id=job.pk)
    # then each shard shows its state, and the job's counts are theirs summed
    assert [(s["number"], s["status"], s["done"], s["total"]) for s in shards] == [
        (0, "succeeded", 4, 4),
        (1, "running", 3, 4),
        (2, "pending", 0, 4),
    ]
    assert shards[1]["worker"] == running.worker and shards[1]["counts_text"] == "3 of 4"
    assert job_shards_totals(shards) == (7, 12, 1)


def test_the_job_page_shows_each_shard(admin_client, running_sharded_job):
    # given a running sharded job with shard 0 claimed
    job_shard_claim(job_id=running_sharded_job.pk, number=0)
    # when its page is read
    page = admin_client.get(reverse("job-detail", args=[running_sharded_job.pk])).content.decode()
    status = admin_client.get(reverse("job-status-json", args=[running_sharded_job.pk])).json()
    # then it lists the shards with their state, and the status JSON carries them for the live page
    assert 'id="job-shards"' in page and 'id="job-shard-2"' in page and worker_identity() in page
    assert "split into 3 shards that" in page
    assert [(s["number"], s["status"]) for s in status["shards"]] == [(0, "running"), (1, "pending"), (2, "pending")]


def test_beat_sends_a_stale_shard_again_once_per_stale_period(
    running_sharded_job, sent_shard_tasks, django_capture_on_commit_callbacks
):
    # given a running job (alive) whose shard 0's worker died, and shard 1 held by a live worker
    job = running_sharded_job
    worker_died(job_shard_claim(job_id=job.pk, number=0))
    job_shard_claim(job_id=job.pk, number=1)
    # when beat sweeps twice
    with django_capture_on_commit_callbacks(execute=True):
        first = job_shards_requeue_stale()
        second = job_shards_requeue_stale()
    # then shard 0 was sent again, once
    assert (first, second) == ([(job.pk, "", 0)], [])
    assert sent_shard_tasks == [("core.tasks.run_job_shard", "default", [job.pk, 0, ""])]


def test_the_beat_task_sweeps_jobs_and_shards(monkeypatch):
    # given the beat task
    from core import tasks

    swept = []
    monkeypatch.setattr(tasks, "jobs_requeue_stale", lambda: swept.append("jobs"))
    monkeypatch.setattr(tasks, "job_shards_requeue_stale", lambda: swept.append("shards"))
    # when it runs, then it sweeps both
    tasks.jobs_requeue_stale_job()
    assert swept == ["jobs", "shards"]


def test_a_cancel_while_the_job_waits_for_other_workers_cancels_it(running_sharded_job, sharded_kind, settings):
    # given a job whose shards all run on other workers (claimed, beating)
    from core.services import job_shards
    from core.services.jobs import JobProgress

    job = running_sharded_job
    for number in range(3):
        job_shard_claim(job_id=job.pk, number=number)
    job_cancel(job_id=job.pk)
    # when the job's worker waits for them, then the cancel stops the wait
    with pytest.raises(JobCancelled):
        job_shards.job_shards_run(
            job=job,
            progress=JobProgress(job),
            plan=lambda: pytest.fail("planned twice"),
            phase="counting",
            unit="items",
        )


def test_a_shard_handler_needs_its_kinds_handler():
    from core.job_registry import job_kinds_register

    with pytest.raises(ValueError, match="test_sharded"):
        job_kinds_register({}, shard_handlers={ShardedParams: lambda params, job, shard, progress: {}})
