"""The pair evaluation job in shards: in one process and on two real worker processes, the losses,
correctness and summary are exactly those of a run in one piece."""

import pytest

from core.models import JobShard, JobShardStatus, JobStatus
from core.services.jobs import job_execute
from evaluation.models import EvaluationStatus, PairEvaluation, PairResult
from evaluation.services.evaluation_shards import pair_shards_plan
from evaluation.services.pair_evaluations import pair_evaluation_run, pair_evaluation_start
from pairs.models import Pair
from tests.factories import PairFactory, PairSetFactory
from tests.security.workerkill.corpus import sentences
from tests.worker_helpers import assert_shards_once_on_every_worker, two_workers

pytestmark = pytest.mark.slow


@pytest.fixture
def pairs(db):
    """``pairs(n)``: a pair set "sharded" of n accepted pairs (a one-turn context each)."""

    def build(n: int):
        texts = sentences(3 * n, seed=31)
        pair_set = PairSetFactory(name="sharded")
        for i in range(n):
            PairFactory(pair_set=pair_set, context=[texts[3 * i]], correct=texts[3 * i + 1], incorrect=texts[3 * i + 2])
        return pair_set

    return build


def results(system_name: str) -> list[tuple]:
    """Every pair's losses and correctness, by pair id (exact floats)."""
    return sorted(
        PairResult.objects.filter(evaluation__system__name=system_name).values_list(
            "pair_id",
            "correct_loss",
            "incorrect_loss",
            "correct_sum_logprob",
            "incorrect_sum_logprob",
            "n_tokens",
            "correct",
        )
    )


def summary_without_system(evaluation: PairEvaluation) -> dict:
    return {key: value for key, value in evaluation.summary.items() if key != "system"}


def reference_run(batch_pairs: int) -> PairEvaluation:
    reference, _ = pair_evaluation_start(pair_set_name="sharded", system_name="reference", enqueue=False, device="cpu")
    pair_evaluation_run(evaluation_id=reference.pk, batch_pairs=batch_pairs, device="cpu")
    reference.refresh_from_db()
    return reference


@pytest.mark.django_db
def test_the_plan_cuts_the_pairs_into_blocks_of_consecutive_ids(pairs, two_gpts):
    # given 10 pairs
    pair_set = pairs(10)
    evaluation = PairEvaluation.objects.create(pair_set=pair_set, system=two_gpts[0])
    # when they are planned in shards of 4
    plan = pair_shards_plan(evaluation=evaluation, size=4)
    # then three shards cover every pair once, in id order
    ids = list(Pair.objects.filter(pair_set=pair_set).order_by("id").values_list("id", flat=True))
    assert [(s.params["first_id"], s.params["last_id"], s.total) for s in plan] == [
        (ids[0], ids[3], 4),
        (ids[4], ids[7], 4),
        (ids[8], ids[9], 2),
    ]


@pytest.mark.django_db
def test_a_pair_evaluation_job_run_in_shards_here_gives_the_results_of_a_run_in_one_piece(pairs, two_gpts, settings):
    # given 30 pairs evaluated in one piece (no job: no shards), 2 pairs per batch
    pairs(30)
    reference = reference_run(batch_pairs=2)
    # when the same model's job runs in shards of 7 (rounded to 8) pairs, eagerly here
    settings.WELLCHOSEN_EVALUATION_SHARD_SIZE = 7
    evaluation, job = pair_evaluation_start(
        pair_set_name="sharded", system_name="sharded", enqueue=False, batch_pairs=2, device="cpu"
    )
    job_execute(job_id=job.pk)
    # then it ran four shards, and every loss, correctness and the summary are the one-piece run's
    job.refresh_from_db()
    evaluation.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    shards = JobShard.objects.filter(job=job, status=JobShardStatus.SUCCEEDED)
    assert list(shards.order_by("number").values_list("total_count", flat=True)) == [8, 8, 8, 6]
    assert evaluation.status == EvaluationStatus.SUCCEEDED
    assert results("sharded") == results("reference") and len(results("sharded")) == 30
    assert summary_without_system(evaluation) == summary_without_system(reference)
    assert evaluation.summary["n"] == 30 and job.result == evaluation.summary
    assert job.phases[-1]["name"] == "scoring pairs" and job.phases[-1]["done"] == 30


@pytest.mark.workers
@pytest.mark.django_db(transaction=True)
def test_two_workers_share_a_pair_evaluation_job_and_give_the_results_of_one_worker(
    pairs, two_gpts, tmp_path, data_dir, monkeypatch
):
    # given 300 pairs evaluated in one piece, in this process, 10 pairs per batch
    n = 300
    pairs(n)
    reference = reference_run(batch_pairs=10)
    # and two worker processes on one queue, which split evaluation jobs into shards of 20 pairs
    with two_workers(
        tmp_path=tmp_path, data_dir=data_dir, monkeypatch=monkeypatch, env={"WELLCHOSEN_EVALUATION_SHARD_SIZE": "20"}
    ) as pair:
        # when the same model's pair evaluation job is sent to them
        evaluation, job = pair_evaluation_start(
            pair_set_name="sharded", system_name="sharded", enqueue=False, batch_pairs=10, device="cpu"
        )
        job = pair.run(job)
    # then the job succeeded, its 15 shards each once, and both workers ran some of them
    assert_shards_once_on_every_worker(job, pair.workers, count=15)
    # and every loss and correctness is the one-process run's, and so is the summary
    evaluation.refresh_from_db()
    assert results("sharded") == results("reference") and len(results("sharded")) == n
    assert summary_without_system(evaluation) == summary_without_system(reference)
    assert evaluation.summary["n"] == n
