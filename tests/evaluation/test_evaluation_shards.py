"""The evaluation job in shards: in one process and on two real worker processes, the selections,
losses and summary are exactly those of a run in one piece."""

import json

import pytest

from annotation.models import FilterRules
from core.models import JobShard, JobShardStatus, JobStatus
from core.services.jobs import job_execute
from evaluation.models import CandidateResult, Evaluation, EvaluationStatus, QuestionResult
from evaluation.services.evaluation_shards import evaluation_shard_size, evaluation_shards_plan
from evaluation.services.evaluations import evaluation_run, evaluation_shard_score, evaluation_start
from tests.security.workerkill.corpus import sentences
from tests.worker_helpers import assert_shards_once_on_every_worker, two_workers
from testsets.services.build import testset_build
from testsets.services.import_tsv import testset_import

pytestmark = pytest.mark.slow


@pytest.fixture
def testset(db, tmp_path):
    """Make a test set "r1" of ``n`` questions (ground truth + 3 false candidates, scored so that every
    one is kept) under the paper's filter rules."""

    def build(n: int):
        FilterRules.objects.get_or_create(version=1, defaults={"note": "Sato et al. (ACL 2020) §3.1 defaults"})
        texts = sentences(7 * n, seed=30)
        tsv, jsonl = tmp_path / "testset.tsv", tmp_path / "scores.jsonl"
        tsv.write_text("".join("\t".join(texts[7 * i : 7 * i + 7]) + "\n" for i in range(n)))
        jsonl.write_text((json.dumps([[5, 4, 5, 5, 4]] + [[1, 0, 1, 2, 1]] * 3) + "\n") * n)
        testset_import(tsv_path=tsv, scores_path=jsonl, dataset_name="sharded")
        return testset_build(dataset_name="sharded", name="r1")

    return build


def results(system_name: str) -> list[tuple]:
    """Every question's selection and every candidate's loss, by test-set position (exact floats)."""
    questions = QuestionResult.objects.filter(evaluation__system__name=system_name).values_list(
        "item__position", "selected_position", "correct"
    )
    candidates = CandidateResult.objects.filter(question__evaluation__system__name=system_name).values_list(
        "question__item__position", "candidate__position", "loss", "sum_logprob", "n_tokens"
    )
    return sorted(questions) + sorted(candidates)


def summary_without_system(evaluation: Evaluation) -> dict:
    return {key: value for key, value in evaluation.summary.items() if key != "system"}


def test_a_shard_holds_whole_batches():
    # when shards of 1,000 questions are asked for batches of 256 (and of 7 questions for batches of 2)
    # then they are rounded up to whole batches
    assert evaluation_shard_size(batch_questions=256, size=1000) == 1024
    assert evaluation_shard_size(batch_questions=2, size=7) == 8
    assert evaluation_shard_size(batch_questions=10, size=20) == 20


@pytest.mark.django_db
def test_the_plan_cuts_the_test_set_into_blocks_of_consecutive_positions(testset, two_gpts):
    # given a test set of 10 questions
    built = testset(10)
    evaluation = Evaluation.objects.create(testset=built, system=two_gpts[0])
    # when it is planned in shards of 4
    plan = evaluation_shards_plan(evaluation=evaluation, size=4)
    # then three shards cover every position once, in order
    positions = list(built.items.order_by("position").values_list("position", flat=True))
    assert [(s.params["first_position"], s.params["last_position"], s.total) for s in plan] == [
        (positions[0], positions[3], 4),
        (positions[4], positions[7], 4),
        (positions[8], positions[9], 2),
    ]


@pytest.mark.django_db
def test_a_shard_run_again_skips_its_questions_with_a_result(testset, two_gpts):
    # given a shard of the first five questions of eight, scored once
    positions = list(testset(8).items.order_by("position").values_list("position", flat=True))
    evaluation, _ = evaluation_start(testset_name="r1", system_name="sharded", enqueue=False, device="cpu")
    block = {"evaluation_id": evaluation.pk, "first_position": positions[0], "last_position": positions[4]}
    block["batch_questions"] = 2
    first = evaluation_shard_score(**block, device="cpu")
    # when it runs again (a takeover of a shard whose worker died after its last batch)
    again = evaluation_shard_score(**block, device="cpu")
    # then it scored nothing twice: five results, four candidates each, none outside the block
    assert (first["scored"], again["scored"], again["skipped_finished"]) == (5, 0, 5)
    assert QuestionResult.objects.filter(evaluation=evaluation).count() == 5
    assert CandidateResult.objects.filter(question__evaluation=evaluation).count() == 20
    assert set(QuestionResult.objects.values_list("item__position", flat=True)) == set(positions[:5])


@pytest.mark.django_db
def test_an_evaluation_job_run_in_shards_here_gives_the_results_of_a_run_in_one_piece(testset, two_gpts, settings):
    # given 30 questions evaluated in one piece (no job: no shards), 2 questions per batch
    testset(30)
    reference, _ = evaluation_start(testset_name="r1", system_name="reference", enqueue=False, device="cpu")
    evaluation_run(evaluation_id=reference.pk, batch_questions=2, device="cpu")
    # when the same model's evaluation job runs in shards of 7 (rounded to 8) questions, eagerly here
    settings.WELLCHOSEN_EVALUATION_SHARD_SIZE = 7
    evaluation, job = evaluation_start(
        testset_name="r1", system_name="sharded", enqueue=False, batch_questions=2, device="cpu"
    )
    job_execute(job_id=job.pk)
    # then it ran four shards, and every selection, loss and the summary are the one-piece run's
    job.refresh_from_db()
    evaluation.refresh_from_db()
    reference.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    shards = JobShard.objects.filter(job=job, status=JobShardStatus.SUCCEEDED)
    assert list(shards.order_by("number").values_list("total_count", flat=True)) == [8, 8, 8, 6]
    assert evaluation.status == EvaluationStatus.SUCCEEDED
    assert results("sharded") == results("reference") and len(results("sharded")) == 30 + 4 * 30
    assert summary_without_system(evaluation) == summary_without_system(reference)
    assert evaluation.summary["questions"] == 30 and job.result == evaluation.summary
    assert job.phases[-1]["name"] == "scoring questions" and job.phases[-1]["done"] == 30


@pytest.mark.django_db
def test_the_summary_does_not_depend_on_the_order_the_shards_wrote_their_results(testset, two_gpts):
    # given 12 questions evaluated in one piece
    positions = list(testset(12).items.order_by("position").values_list("position", flat=True))
    reference, _ = evaluation_start(testset_name="r1", system_name="reference", enqueue=False, device="cpu")
    evaluation_run(evaluation_id=reference.pk, batch_questions=2, device="cpu")
    # when the same model's shards write the last block first, then the first (two workers' order)
    evaluation, _ = evaluation_start(testset_name="r1", system_name="sharded", enqueue=False, device="cpu")
    for first, last in ((positions[6], positions[11]), (positions[0], positions[5])):
        evaluation_shard_score(
            evaluation_id=evaluation.pk, first_position=first, last_position=last, batch_questions=2, device="cpu"
        )
    evaluation_run(evaluation_id=evaluation.pk, batch_questions=2, device="cpu")  # nothing left: the summary
    # then the accuracies and their bootstrap intervals are the one-piece run's
    evaluation.refresh_from_db()
    reference.refresh_from_db()
    assert summary_without_system(evaluation) == summary_without_system(reference)
    assert results("sharded") == results("reference")


@pytest.mark.workers
@pytest.mark.django_db(transaction=True)
def test_two_workers_share_an_evaluation_job_and_give_the_results_of_one_worker(
    testset, two_gpts, tmp_path, data_dir, monkeypatch
):
    # given 300 questions evaluated in one piece, in this process, 10 questions per batch
    n = 300
    testset(n)
    reference, _ = evaluation_start(testset_name="r1", system_name="reference", enqueue=False, device="cpu")
    evaluation_run(evaluation_id=reference.pk, batch_questions=10, device="cpu")
    # and two worker processes on one queue, which split evaluation jobs into shards of 20 questions
    with two_workers(
        tmp_path=tmp_path, data_dir=data_dir, monkeypatch=monkeypatch, env={"WELLCHOSEN_EVALUATION_SHARD_SIZE": "20"}
    ) as pair:
        # when the same model's evaluation job is sent to them
        evaluation, job = evaluation_start(
            testset_name="r1", system_name="sharded", enqueue=False, batch_questions=10, device="cpu"
        )
        job = pair.run(job)
    # then the job succeeded, its 15 shards each once, and both workers ran some of them
    assert_shards_once_on_every_worker(job, pair.workers, count=15)
    # and every selection and loss is the one-process run's, and so is the summary
    evaluation.refresh_from_db()
    reference.refresh_from_db()
    assert results("sharded") == results("reference") and len(results("sharded")) == n + 4 * n
    assert summary_without_system(evaluation) == summary_without_system(reference)
    assert evaluation.summary["questions"] == n
