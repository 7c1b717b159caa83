"""The masked LM's guard: a weak model is refused before a negatives job manipulates anything, a
trained one passes, and --skip-guard generates anyway with the override in the report."""

import math

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Candidate, CandidateSource, Turn
from core.job_registry import job_kind_get
from core.models import Job
from core.text import text_hash
from negatives.guard import MAX_PSEUDO_PERPLEXITY, MIN_CONTEXT_GAIN, mlm_measure
from negatives.manipulation import Item, Manipulator, dialogue_pairs
from negatives.mlm import MaskedLM
from negatives.models import QuestionGeneration
from tests.factories import DatasetFactory, QuestionFactory
from tests.tiny_models import TEXTS

DIALOGUES = [list(TEXTS[i : i + 4]) for i in range(0, 12, 4)]
TRAINING_STEPS = 100  # a random tiny model learns the test dialogues well enough to pass


@pytest.fixture(scope="module")
def trained_mlm_dir(tiny_mlm_dir, tmp_path_factory):
    """The random tiny MLM fine-tuned (negatives.training, as finetune_mlm does) on the test
    dialogues as (context, turn) pairs, the text the guard then measures it on."""
    from negatives.training import mlm_train

    texts = list(dict.fromkeys(pair for turns in DIALOGUES for pair in dialogue_pairs(turns)))
    out = tmp_path_factory.mktemp("guard-mlm") / "model"
    mlm_train(
        mlm=MaskedLM.load(tiny_mlm_dir, setting="test", device="cpu"),
        read=lambda: iter(texts),
        folder=out,
        steps=TRAINING_STEPS,
        batch_size=32,
        learning_rate=3e-3,
        mlm_probability=0.15,
        max_length=64,
        seed=0,
    )
    return out


@pytest.fixture
def dataset(db):
    """A question for each turn after the first of the test dialogues, with the turns before it."""
    dataset = DatasetFactory(name="guarded")
    for turns in DIALOGUES:
        for j in range(1, len(turns)):
            question = QuestionFactory(dataset=dataset, ground_truth=turns[j])
            Turn.objects.filter(context=question.context).delete()
            Turn.objects.bulk_create(
                Turn(context=question.context, position=k, speaker="", text=t, text_hash=text_hash(t))
                for k, t in enumerate(turns[:j])
            )
    return dataset


def items() -> list[Item]:
    return [Item(key=0, context=turns[:j], response=turns[j]) for turns in DIALOGUES for j in range(1, len(turns))]


def test_a_random_masked_lm_falls_short_of_the_bar(tiny_mlm_dir):
    measure = mlm_measure(Manipulator(MaskedLM.load(tiny_mlm_dir, setting="test", device="cpu")), items())
    assert measure.words > 50 and not measure.passed
    assert measure.pseudo_perplexity > MAX_PSEUDO_PERPLEXITY


def test_a_trained_masked_lm_passes(trained_mlm_dir):
    measure = mlm_measure(Manipulator(MaskedLM.load(trained_mlm_dir, setting="test", device="cpu")), items())
    assert measure.pseudo_perplexity <= MAX_PSEUDO_PERPLEXITY and measure.context_gain >= MIN_CONTEXT_GAIN
    assert measure.passed


def test_the_job_refuses_a_weak_masked_lm_naming_the_values_and_the_bar(dataset, tiny_mlm_dir):
    with pytest.raises(CommandError, match=r"too weak .* pseudo-perplexity [\d,.]+ per word is above 100") as failed:
        call_command("generate_negatives", "--dataset", dataset.name, "--mlm", str(tiny_mlm_dir))
    assert "--skip-guard" in str(failed.value)
    # and nothing was manipulated
    assert not QuestionGeneration.objects.exists()
    assert not Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE).exists()


def test_skip_guard_generates_anyway_and_the_report_records_it(dataset, tiny_mlm_dir):
    call_command("generate_negatives", "--dataset", dataset.name, "--mlm", str(tiny_mlm_dir), "--skip-guard")
    job = Job.objects.get(kind="generate_negatives")
    guard = job.result["mlm_guard"]
    assert guard["skipped"] is True and guard["passed"] is False
    assert guard["pseudo_perplexity"] > guard["max_pseudo_perplexity"] == MAX_PSEUDO_PERPLEXITY
    summary = job_kind_get(job.kind).params(dataset=dataset.name).summary(job.result)
    assert "generated anyway (--skip-guard)" in summary
    assert QuestionGeneration.objects.count() == 9


def test_the_job_runs_with_a_trained_masked_lm_and_reports_the_guard(dataset, trained_mlm_dir):
    call_command("generate_negatives", "--dataset", dataset.name, "--mlm", str(trained_mlm_dir))
    guard = Job.objects.get(kind="generate_negatives").result["mlm_guard"]
    assert guard["passed"] is True and guard["skipped"] is False
    assert math.isfinite(guard["context_gain"]) and guard["words"] > 50
