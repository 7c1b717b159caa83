"""Evaluation jobs killed mid-run: a selection-accuracy evaluation, a pair evaluation and a generation
resume from their committed batches; every question (pair) ends with one result, as in a run never
killed."""

import json
from pathlib import Path

import pytest

from core.models import Job, JobShard, JobShardStatus
from evaluation.models import CandidateResult, EvaluationStatus, GeneratedResponse, PairResult, QuestionResult
from evaluation.scoring.loading import scorer_cache_clear, scorer_for
from evaluation.selectors import items_with_texts
from evaluation.services.evaluations import evaluation_start
from evaluation.services.generations import generation_start
from evaluation.services.pair_evaluations import pair_evaluation_start
from evaluation.services.systems import system_register
from tests.factories import PairFactory, PairSetFactory
from tests.security.workerkill.corpus import sentences
from tests.security.workerkill.killing import assert_succeeded_once, kill_mid_job_and_take_over
from testsets.services.build import testset_build
from testsets.services.import_tsv import testset_import

pytestmark = [pytest.mark.slow, pytest.mark.workers, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

CANDIDATES = 4  # the ground truth and 3 false candidates


def scored_dataset(folder: Path, n: int) -> None:
    """A dataset "killed" of n questions, its candidates scored so that every one makes the test set."""
    texts = sentences(7 * n, seed=20)
    tsv, jsonl = folder / "testset.tsv", folder / "scores.jsonl"
    tsv.write_text("".join("\t".join(texts[7 * i : 7 * i + 7]) + "\n" for i in range(n)))
    jsonl.write_text((json.dumps([[5, 4, 5, 5, 4]] + [[1, 0, 1, 2, 1]] * 3) + "\n") * n)
    testset_import(tsv_path=tsv, scores_path=jsonl, dataset_name="killed")


@pytest.fixture
def gpt(db, filter_rules, tiny_gpt2_dir):
    yield system_register(name="gpt", kind="causal", checkpoint=str(tiny_gpt2_dir), speaker_tags=True)
    scorer_cache_clear()


def test_an_evaluation_killed_mid_test_set_resumes_and_scores_every_question_once(cluster, gpt, tmp_path):
    # given a test set of 800 questions and a tiny GPT-2, scored 20 questions per committed batch,
    # in shards of 200 questions (a fast machine scores the 800 in about a second)
    n = 800
    scored_dataset(tmp_path, n)
    testset = testset_build(dataset_name="killed", name="r1")
    cluster.env["WELLCHOSEN_EVALUATION_SHARD_SIZE"] = "200"
    evaluation, job = evaluation_start(
        testset_name="r1", system_name="gpt", enqueue=False, batch_questions=20, device="cpu"
    )
    kept = {}

    def committed_batches_kept() -> None:
        kept["done"] = QuestionResult.objects.filter(evaluation=evaluation).count()
        assert kept["done"] >= Job.objects.get(pk=job.pk).done_count > 0
        assert CandidateResult.objects.filter(question__evaluation=evaluation).count() == CANDIDATES * kept["done"]

    # when its worker is killed part-way and a second worker takes the job over
    job = kill_mid_job_and_take_over(job, cluster, after_kill=committed_batches_kept)
    # then the evaluation succeeded once, its plan kept, with one result per question and per candidate
    assert_succeeded_once(job)
    shards = JobShard.objects.filter(job=job)
    assert shards.count() == 4 and set(shards.values_list("status", flat=True)) == {JobShardStatus.SUCCEEDED}
    evaluation.refresh_from_db()
    assert evaluation.status == EvaluationStatus.SUCCEEDED and evaluation.summary["questions"] == n
    results = QuestionResult.objects.filter(evaluation=evaluation)
    candidates = CandidateResult.objects.filter(question__evaluation=evaluation)
    assert (results.count(), results.values("item").distinct().count()) == (n, n)
    assert (candidates.count(), candidates.values("candidate").distinct().count()) == (CANDIDATES * n,) * 2
    assert evaluation.summary["correct"] == results.filter(correct=True).count()
    # and the losses of questions scored before and after the kill are the ones a run never killed gives
    first, last = testset.items.order_by("position")[0], testset.items.order_by("position")[n - 1]
    items = items_with_texts(item_ids=[first.pk, last.pk])
    expected = scorer_for(gpt, device="cpu").score(
        [item["turns"] for item in items], [[c["candidate__text"] for c in item["candidates"]] for item in items]
    )
    for item, scores in zip(items, expected, strict=True):
        stored = dict(candidates.filter(question__item_id=item["item_id"]).values_list("candidate_id", "loss"))
        for candidate, score in zip(item["candidates"], scores, strict=True):
            assert stored[candidate["id"]] == pytest.approx(score.loss, abs=1e-4)


def test_a_pair_evaluation_killed_mid_set_resumes_and_scores_every_pair_once(cluster, gpt):
    # given a set of 800 accepted pairs and a tiny GPT-2, scored 20 pairs per committed batch, in
    # shards of 200 pairs
    n = 800
    cluster.env["WELLCHOSEN_EVALUATION_SHARD_SIZE"] = "200"
    texts = sentences(3 * n, seed=21)
    pair_set = PairSetFactory(name="killed-pairs")
    pairs = [
        PairFactory(pair_set=pair_set, context=[texts[3 * i]], correct=texts[3 * i + 1], incorrect=texts[3 * i + 2])
        for i in range(n)
    ]
    evaluation, job = pair_evaluation_start(
        pair_set_name=pair_set.name, system_name="gpt", enqueue=False, batch_pairs=20, device="cpu"
    )
    kept = {}

    def committed_batches_kept() -> None:
        kept["done"] = PairResult.objects.filter(evaluation=evaluation).count()
        assert kept["done"] >= Job.objects.get(pk=job.pk).done_count > 0

    # when its worker is killed part-way and a second worker takes the job over
    job = kill_mid_job_and_take_over(job, cluster, after_kill=committed_batches_kept)
    # then the evaluation succeeded once, its plan kept, with one result per pair
    assert_succeeded_once(job)
    shards = JobShard.objects.filter(job=job)
    assert shards.count() == 4 and set(shards.values_list("status", flat=True)) == {JobShardStatus.SUCCEEDED}
    evaluation.refresh_from_db()
    results = PairResult.objects.filter(evaluation=evaluation)
    assert evaluation.status == EvaluationStatus.SUCCEEDED and evaluation.summary["n"] == n
    assert (results.count(), results.values("pair").distinct().count()) == (n, n)
    assert evaluation.summary["correct"] == results.filter(correct=True).count()
    # and the losses of pairs scored before and after the kill are the ones a run never killed gives
    scorer = scorer_for(gpt, device="cpu")
    for pair in (pairs[0], pairs[-1]):
        expected = scorer.score([pair.context], [[pair.correct, pair.incorrect]])[0]
        stored = results.get(pair=pair)
        assert stored.correct_loss == pytest.approx(expected[0].loss, abs=1e-4)
        assert stored.incorrect_loss == pytest.approx(expected[1].loss, abs=1e-4)


def test_a_generation_killed_mid_dataset_resumes_and_answers_every_context_once(cluster, gpt, tmp_path):
    # given a dataset of 160 questions and a tiny GPT-2 answering 8 contexts per committed batch, in
    # shards of 40 contexts (a worker that takes the job over runs the shards' queued messages
    # first: the timeout covers all the work left)
    n = 160
    cluster.env["WELLCHOSEN_EVALUATION_SHARD_SIZE"] = "40"
    scored_dataset(tmp_path, n)
    generation, job = generation_start(
        system_name="gpt", dataset_name="killed", max_new_tokens=16, enqueue=False, batch_size=8, device="cpu"
    )
    kept = {}

    def committed_batches_kept() -> None:
        kept["done"] = GeneratedResponse.objects.filter(generation=generation).count()
        assert kept["done"] >= Job.objects.get(pk=job.pk).done_count > 0

    # when its worker is killed part-way and a second worker takes the job over
    job = kill_mid_job_and_take_over(job, cluster, after_kill=committed_batches_kept)
    # then the generation succeeded once, its plan kept, with one response per context
    assert_succeeded_once(job)
    shards = JobShard.objects.filter(job=job)
    assert shards.count() == 4 and set(shards.values_list("status", flat=True)) == {JobShardStatus.SUCCEEDED}
    generation.refresh_from_db()
    responses = GeneratedResponse.objects.filter(generation=generation)
    assert generation.status == EvaluationStatus.SUCCEEDED and job.result["responses"] == n
    assert (responses.count(), responses.values("context_key").distinct().count()) == (n, n)
    assert responses.values("question").distinct().count() == n
