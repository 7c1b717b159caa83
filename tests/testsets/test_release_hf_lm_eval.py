"""The exported lm-eval task, run by lm-evaluation-harness on the tiny GPT-2, selects what our own
evaluation selects under the summed log-prob rule, question by question."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Candidate, Turn
from core.text import text_hash
from evaluation.models import CandidateResult
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services.evaluations import evaluation_run, evaluation_start
from evaluation.services.systems import system_register
from tests.factories import DatasetFactory
from tests.tiny_models import TEXTS
from testsets.models import TestSet
from testsets.services.build import testset_build

# lm-eval and the tiny GPT-2 against our scoring: nothing in it depends on the database engine
pytestmark = [pytest.mark.slow, pytest.mark.heavy]

GOOD = [5, 5, 4, 5, 5]
WRONG = [1, 1, 2, 1, 1]
N_QUESTIONS = 10
# contexts of two short turns and short responses: nothing is truncated by either side (the tiny
# GPT-2 has 96 positions)
SHORT = [text for text in TEXTS if len(text) <= 40]


@pytest.fixture
def release(db, scored_question) -> TestSet:
    """Questions whose contexts and responses are sentences the tiny tokenizer was trained on, so
    that the random model's choices vary from question to question."""
    dataset = DatasetFactory(name="lm-ds")
    for n in range(N_QUESTIONS):
        question = scored_question(dataset=dataset, gt=GOOD, false=[WRONG] * 3)
        Turn.objects.filter(context=question.context, position__gte=2).delete()
        for turn in Turn.objects.filter(context=question.context):
            turn.text = SHORT[(n + turn.position) % len(SHORT)]
            turn.save(update_fields=["text"])
        for i, candidate in enumerate(question.candidates.order_by("id")):
            text = SHORT[(n * 5 + i + 3) % len(SHORT)]
            Candidate.objects.filter(pk=candidate.pk).update(text=text, text_hash=text_hash(text))
    testset = testset_build(dataset_name=dataset.name, name="lm-rel", seed=1)
    return TestSet.objects.get(pk=testset.pk)


@pytest.fixture
def our_sum_logprobs(release, tiny_gpt2_dir) -> tuple[dict, list[list[float]]]:
    """The project's evaluation of the tiny GPT-2 as a causal system (newline separator, no speaker
    tags, nothing truncated): its summary and, per question in release order, each choice's summed
    log-prob in the release's choice order."""
    system_register(
        name="tiny-lm",
        kind="causal",
        checkpoint=str(tiny_gpt2_dir),
        turn_separator="\n",
        speaker_tags=False,
        max_context_tokens=64,
        max_candidate_tokens=32,
    )
    evaluation, _ = evaluation_start(testset_name="lm-rel", system_name="tiny-lm", enqueue=False)
    summary = evaluation_run(evaluation_id=evaluation.pk)
    rows = CandidateResult.objects.filter(question__evaluation=evaluation).order_by(
        "question__item__position", "candidate__position"
    )
    per_question: dict[int, list[float]] = {}
    for row in rows.values("question__item__position", "sum_logprob"):
        per_question.setdefault(row["question__item__position"], []).append(row["sum_logprob"])
    yield summary, [per_question[p] for p in sorted(per_question)]
    scorer_cache_clear()


@pytest.fixture
def lm_eval_results(release, tiny_gpt2_dir, tmp_path, monkeypatch) -> tuple[dict, list[dict]]:
    """lm-eval's simple_evaluate on the exported task, run from the folder as its card says."""
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tmp_path / "hf"
    call_command("export_testset", "lm-rel", format=["hf"], out=folder, stdout=StringIO())
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_dir)
    results = simple_evaluate(
        model=HFLM(pretrained=model, tokenizer=tokenizer, batch_size=8),
        tasks=["wellchosen_lm-rel"],
        task_manager=TaskManager(include_path=str(folder / "lm_eval")),
        log_samples=True,
    )
    samples = sorted(results["samples"]["wellchosen_lm-rel"], key=lambda s: s["doc_id"])
    return results["results"]["wellchosen_lm-rel"], samples


def _argmax(values: list[float]) -> int:
    return max(range(len(values)), key=lambda i: (values[i], -i))


def test_lm_eval_selects_what_our_summed_log_prob_rule_selects(our_sum_logprobs, lm_eval_results):
    summary, ours = our_sum_logprobs
    metrics, samples = lm_eval_results
    theirs = [[float(resp[0][0]) for resp in sample["resps"]] for sample in samples]
    assert len(theirs) == len(ours) == N_QUESTIONS
    # the same choice, question by question, and the same accuracy
    assert [_argmax(q) for q in theirs] == [_argmax(q) for q in ours]
    assert [bool(s["acc"]) for s in samples] == [
        _argmax(q) == s["doc"]["label"] for q, s in zip(ours, samples, strict=True)
    ]
    assert metrics["acc,none"] == pytest.approx(summary["sum_logprob_rule"]["accuracy"])
    # a test that tells the systems apart: the random model is neither always right nor always wrong
    assert 0 < summary["sum_logprob_rule"]["correct"] < N_QUESTIONS


def test_lm_eval_log_likelihoods_differ_from_ours_by_one_constant_per_question(our_sum_logprobs, lm_eval_results):
    # lm-eval moves the context's trailing "\n" into every continuation: each choice's
    # log-likelihood also holds log p("\n" | context), the same for all choices of a question
    _, ours = our_sum_logprobs
    _, samples = lm_eval_results
    for ours_q, sample in zip(ours, samples, strict=True):
        theirs_q = [float(resp[0][0]) for resp in sample["resps"]]
        offsets = [t - o for t, o in zip(theirs_q, ours_q, strict=True)]
        assert max(offsets) - min(offsets) == pytest.approx(0, abs=1e-4)
        assert offsets[0] < 0  # a log-probability: the newline's own
