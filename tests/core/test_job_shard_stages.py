"""A job of several stages of shards (JobShard.stage): each stage is its own plan, numbered from
0, run by its kind's shard handler for that stage; claims, progress, failures, cache keys and the
stale sweep are scoped to the stage."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import IntegrityError
from django.urls import reverse
from django.utils import timezone

from core.errors import UserError
from core.job_registry import job_kind_get, job_kind_register, job_kind_unregister
from core.models import Job, JobShard, JobShardStatus, JobStatus, job_shard_cache_key
from core.selectors import job_shards_live, job_shards_totals
from core.services.job_shard_claims import job_shard_claim
from core.services.job_shards import ShardSpec, job_shard_execute, job_shards_plan, job_shards_requeue_stale
from core.services.jobs import JobProgress, job_claim, job_create, job_execute
from tests.core.scripted import ScriptedParams, ShardedParams, StagedParams


@pytest.fixture
def staged_job(db, staged_kind):
    """A pending job of the two-stage kind, not sent to any worker."""
    return job_create(params=StagedParams(), enqueue=False)


@pytest.fixture
def two_stages(staged_job):
    """The staged job claimed by a worker, with stage "first" (2 shards) and stage "" (3 shards)
    planned: shard 0 and 1 exist in both."""
    job = job_claim(job_id=staged_job.pk)
    job_shards_plan(job=job, plan=lambda: [ShardSpec({"items": 2}, total=2)] * 2, stage="first")
    job_shards_plan(job=job, plan=lambda: [ShardSpec({"items": 5}, total=5)] * 3)
    return job


def test_each_stage_runs_its_own_plan_with_its_own_shard_handler(staged_job, staged_kind):
    # when a job of two stages runs (eager: its own worker runs every shard)
    job_execute(job_id=staged_job.pk)
    job = Job.objects.get(pk=staged_job.pk)
    assert job.status == JobStatus.SUCCEEDED, job.error
    # then each stage's shards ran, numbered from 0, the first stage's before the second's
    assert staged_kind.ran == [("first", 0), ("first", 1), ("", 0), ("", 1), ("", 2)]
    rows = JobShard.objects.filter(job=job).order_by("id")
    assert [(s.stage, s.number, s.status) for s in rows] == [
        ("first", 0, "succeeded"),
        ("first", 1, "succeeded"),
        ("", 0, "succeeded"),
        ("", 1, "succeeded"),
        ("", 2, "succeeded"),
    ]
    # and each stage's results came from its own handler, in its shard order
    assert job.result == {
        "first": [{"handler": "first", "number": 0}, {"handler": "first", "number": 1}],
        "second": [{"handler": "second", "number": n} for n in range(3)],
    }


def test_each_stage_phase_counts_only_its_own_shards(staged_job):
    job_execute(job_id=staged_job.pk)
    phases = Job.objects.get(pk=staged_job.pk).phases
    assert [(p["name"], p["unit"], p["done"], p["total"]) for p in phases] == [
        ("first stage", "a", 4, 4),
        ("second stage", "b", 15, 15),
    ]


def test_a_shard_number_is_unique_within_its_stage_only(two_stages):
    assert JobShard.objects.filter(job=two_stages, number=0).count() == 2
    with pytest.raises(IntegrityError):
        JobShard.objects.create(job=two_stages, stage="first", number=0)


def test_a_claim_takes_a_shard_of_its_stage_only(two_stages):
    # when a worker claims shard 0 of stage "first", then the first pending shard of stage ""
    first = job_shard_claim(job_id=two_stages.pk, number=0, stage="first")
    second = job_shard_claim(job_id=two_stages.pk)
    # then each is its stage's shard 0, and the other stage's shard 0 was left alone
    assert (first.stage, first.number, second.stage, second.number) == ("first", 0, "", 0)
    assert job_shard_claim(job_id=two_stages.pk, number=0, stage="first") is None
    assert job_shard_claim(job_id=two_stages.pk, stage="first").number == 1
    assert job_shard_claim(job_id=two_stages.pk, stage="first") is None
    assert job_shard_claim(job_id=two_stages.pk, stage="other") is None


def test_two_stages_shard_0_have_their_own_cache_keys(two_stages):
    first = job_shard_claim(job_id=two_stages.pk, number=0, stage="first")
    second = job_shard_claim(job_id=two_stages.pk, number=0)
    assert first.cache_key("progress") != second.cache_key("progress")
    assert first.cache_key("heartbeat") == job_shard_cache_key(two_stages.pk, 0, "heartbeat", stage="first")


def test_a_stages_progress_sums_only_its_shards(two_stages):
    # given shard 0 of each stage running, each with its own live counts in the cache
    job = two_stages
    job_shard_claim(job_id=job.pk, number=0, stage="first")
    job_shard_claim(job_id=job.pk, number=0)
    cache.set(job_shard_cache_key(job.pk, 0, "progress", stage="first"), _counts(1, 2), timeout=60)
    cache.set(job_shard_cache_key(job.pk, 0, "progress", stage=""), _counts(3, 5), timeout=60)
    # when each stage's progress is read, then it sums its own shards only
    assert job_shards_totals(job_shards_live(job_id=job.pk, stage="first")) == (1, 4, 0)
    assert job_shards_totals(job_shards_live(job_id=job.pk, stage="")) == (3, 15, 0)
    # and the job's page lists every stage's shards, in the order they were planned
    every = job_shards_live(job_id=job.pk)
    assert [(s["stage"], s["number"], s["done"]) for s in every] == [
        ("first", 0, 1),
        ("first", 1, 0),
        ("", 0, 3),
        ("", 1, 0),
        ("", 2, 0),
    ]


def _counts(done: int, total: int) -> dict:
    return {"done_count": done, "total_count": total, "failed_count": 0}


def test_a_failed_shard_of_another_stage_does_not_fail_this_stage(two_stages, staged_kind):
    from core.services.job_shards import job_shards_run

    # given stage "first" with a failed shard (a stage the handler does not run now)
    JobShard.objects.filter(job=two_stages, stage="first", number=1).update(
        status=JobShardStatus.FAILED, attempts=1, error="boom"
    )
    # when stage "" runs, then it runs its three shards and succeeds
    results = job_shards_run(
        job=two_stages, progress=JobProgress(two_stages), plan=lambda: pytest.fail("planned twice"), phase="b", unit="b"
    )
    assert [r["number"] for r in results] == [0, 1, 2]


def test_a_failed_shard_of_a_stage_names_its_stage(two_stages):
    from core.services.job_shards import job_shards_run

    JobShard.objects.filter(job=two_stages, stage="first", number=1).update(
        status=JobShardStatus.FAILED, attempts=1, error="boom"
    )
    with pytest.raises(UserError, match="first shard 2 of 2 failed: boom"):
        job_shards_run(
            job=two_stages,
            progress=JobProgress(two_stages),
            plan=lambda: pytest.fail("planned twice"),
            phase="a",
            unit="a",
            stage="first",
        )


def test_a_message_runs_a_shard_of_its_stage_with_that_stages_handler(two_stages, staged_kind):
    # when a worker takes the messages for shard 1 of stage "first" and shard 1 of stage ""
    job_shard_execute(job_id=two_stages.pk, number=1, stage="first")
    job_shard_execute(job_id=two_stages.pk, number=1)
    # then it ran those two, each with its stage's handler
    assert staged_kind.ran == [("first", 1), ("", 1)]
    done = JobShard.objects.filter(job=two_stages, status=JobShardStatus.SUCCEEDED).order_by("id")
    assert [(s.stage, s.number, s.result["handler"]) for s in done] == [("first", 1, "first"), ("", 1, "second")]


def test_a_message_queued_before_stages_existed_runs_a_shard_of_stage_empty(two_stages, staged_kind):
    from core.tasks import run_job_shard

    # when a message of two arguments (job id, number) arrives, then shard 2 of stage "" runs
    run_job_shard.apply(args=[two_stages.pk, 2])
    assert staged_kind.ran == [("", 2)]
    run_job_shard.apply(args=[two_stages.pk, 0, "first"])
    assert staged_kind.ran == [("", 2), ("first", 0)]


def test_beat_sends_a_stale_shard_again_with_its_stage(
    two_stages, sent_shard_tasks, django_capture_on_commit_callbacks
):
    # given shard 0 of stage "first" whose worker died, and shard 0 of stage "" held by a live worker
    job = two_stages
    dead = job_shard_claim(job_id=job.pk, number=0, stage="first")
    cache.delete(dead.cache_key("heartbeat"))
    JobShard.objects.filter(pk=dead.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    job_shard_claim(job_id=job.pk, number=0)
    # when beat sweeps twice
    with django_capture_on_commit_callbacks(execute=True):
        first, second = job_shards_requeue_stale(), job_shards_requeue_stale()
    # then the dead stage's shard 0 was sent again once, naming its stage
    assert (first, second) == ([(job.pk, "first", 0)], [])
    assert sent_shard_tasks == [("core.tasks.run_job_shard", "default", [job.pk, 0, "first"])]


def test_a_live_shard_0_of_one_stage_does_not_keep_another_stages_shard_0_alive(two_stages):
    # given shard 0 of stage "" beating (its cache heartbeat is fresh), and shard 0 of "first" whose worker died
    job = two_stages
    dead = job_shard_claim(job_id=job.pk, number=0, stage="first")
    cache.delete(dead.cache_key("heartbeat"))
    JobShard.objects.filter(pk=dead.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    job_shard_claim(job_id=job.pk, number=0)
    # when another worker claims shard 0 of "first", then it takes it over
    taken = job_shard_claim(job_id=job.pk, number=0, stage="first")
    assert (taken.pk, taken.attempts) == (dead.pk, 2)


def test_a_shard_handler_registered_as_one_callable_is_stage_empty(sharded_kind):
    kind = job_kind_get(ShardedParams.kind)
    assert kind.shard_handlers == {"": sharded_kind.run_shard}
    assert kind.shard_handler("") == sharded_kind.run_shard
    with pytest.raises(UserError, match="no shard handler of stage 'encoding'"):
        kind.shard_handler("encoding")


def test_a_kind_without_shard_handlers_has_none(db):
    job_kind_register(params=ScriptedParams, handler=lambda params, job, progress: {})
    try:
        with pytest.raises(UserError, match="has no shard handler$"):
            job_kind_get(ScriptedParams.kind).shard_handler("")
    finally:
        job_kind_unregister(ScriptedParams.kind)


def test_a_shard_of_a_stage_without_a_handler_fails_with_that_error(sharded_job_of_two_stages):
    job = sharded_job_of_two_stages
    job_shard_execute(job_id=job.pk, number=0, stage="encoding")
    shard = JobShard.objects.get(job=job, stage="encoding", number=0)
    assert shard.status == JobShardStatus.FAILED and "no shard handler of stage 'encoding'" in shard.error


@pytest.fixture
def sharded_job_of_two_stages(db, sharded_kind):
    """A running job of the one-stage test kind, with a shard planned in a stage it has no handler for."""
    job = job_claim(job_id=job_create(params=ShardedParams(), enqueue=False).pk)
    job_shards_plan(job=job, plan=lambda: [ShardSpec({"first": 0, "last": 0})], stage="encoding")
    return job


def test_the_job_page_shows_each_shards_stage(admin_client, two_stages):
    job_shard_claim(job_id=two_stages.pk, number=0, stage="first")
    page = admin_client.get(reverse("job-detail", args=[two_stages.pk])).content.decode()
    status = admin_client.get(reverse("job-status-json", args=[two_stages.pk])).json()
    assert 'id="job-shard-first-0"' in page and 'id="job-shard-0"' in page and 'id="job-shard-2"' in page
    assert '<td class="shard-stage">first</td>' in page
    assert [(s["stage"], s["number"]) for s in status["shards"]][:3] == [("first", 0), ("first", 1), ("", 0)]


def test_the_job_admin_shows_each_shards_stage(admin_client, two_stages):
    page = admin_client.get(reverse("admin:core_job_change", args=[two_stages.pk])).content.decode()
    assert 'class="field-stage"' in page and "<p>first</p>" in page
