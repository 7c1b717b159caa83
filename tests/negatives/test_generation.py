"""Generating negatives for a dataset: candidates with provenance, outcomes, resumption, bad input."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Candidate, CandidateSource
from core.errors import UserError
from core.job_registry import job_kind_get
from core.models import Job
from negatives.manipulation import ManipulationSettings, Manipulator
from negatives.models import GenerationOutcome, QuestionGeneration
from negatives.services.generation import negatives_generate
from tests.factories import DatasetFactory, QuestionFactory

pytestmark = pytest.mark.django_db

GROUND_TRUTHS = [
    "Sure, I will try again after dinner.",
    "It is forty dollars, but it is on sale today.",
    "The train leaves at nine o'clock from platform two.",
    "Let's meet in front of the library at noon.",
    "Okay",  # too short: skipped, as in the paper
]
EVERY_WORD = -1e9


@pytest.fixture
def dataset():
    dataset = DatasetFactory(name="dialogues")
    for text in GROUND_TRUTHS:
        QuestionFactory(dataset=dataset, ground_truth=text)
    return dataset


def generate(dataset, mlm_dir, **settings):
    batch_size = settings.pop("batch_size", 64)
    return negatives_generate(
        dataset_name=dataset.name,
        mlm_path=str(mlm_dir),
        settings=ManipulationSettings(**settings),
        batch_size=batch_size,
    )


def generated(dataset):
    return Candidate.objects.filter(question__dataset=dataset, source=CandidateSource.MLM_NEGATIVE).order_by("id")


def test_negatives_join_the_pools_with_their_provenance(dataset, tiny_mlm_dir):
    report = generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD, per_question=2, seed=5)
    negatives = list(generated(dataset))
    assert report["candidates_added"] == len(negatives) == 8
    negative = negatives[0]
    assert not negative.is_ground_truth and negative.rank == 1
    provenance = negative.provenance
    assert provenance["model_version"] == negative.retriever_version and "@" in provenance["model_version"]
    assert provenance["threshold"] == EVERY_WORD and provenance["seed"] == 5 and provenance["sample"] == 0
    assert [s["position"] for s in provenance["selected"]] == [r["position"] for r in provenance["replacements"]]
    assert all(set(s) == {"position", "word", "score"} for s in provenance["selected"])
    assert all(r["original"] != r["replacement"] for r in provenance["replacements"])


def test_every_question_has_an_outcome_and_the_report_counts_them(dataset, tiny_mlm_dir):
    report = generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD, punctuation=True)
    outcomes = dict(QuestionGeneration.objects.values_list("question__ground_truth", "outcome"))
    assert outcomes.pop("Okay") == GenerationOutcome.TOO_SHORT
    assert set(outcomes.values()) == {GenerationOutcome.GENERATED}
    assert report["generated"] == 4 and report["too_short"] == 1 and report["failed"] == 0
    assert report["share_with_negative"] == pytest.approx(4 / 5)
    assert report["share_of_words_replaced"] == 1.0
    assert report["share_of_wordpiece_tokens_replaced"] == 1.0


def test_the_shares_replaced_are_per_word_and_per_token(dataset, tiny_mlm_dir):
    # a threshold in the middle selects some words: each share is its own count over its own total
    report = generate(dataset, tiny_mlm_dir, threshold=0.0, punctuation=True)
    assert 0 < report["share_of_words_replaced"] <= 1 and 0 < report["share_of_wordpiece_tokens_replaced"] <= 1


def test_a_question_without_a_word_above_the_threshold_is_counted_not_failed(dataset, tiny_mlm_dir):
    report = generate(dataset, tiny_mlm_dir, threshold=1e9)
    assert report["no_word_selected"] == 4 and report["candidates_added"] == 0 and report["failed"] == 0


def test_running_again_with_the_same_setup_adds_nothing(dataset, tiny_mlm_dir):
    generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD)
    first = list(generated(dataset).values_list("text", flat=True))
    report = generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD)
    assert report["skipped_finished"] == 5 and report["candidates_added"] == 0
    assert list(generated(dataset).values_list("text", flat=True)) == first


def test_an_interrupted_run_resumes_where_it_stopped_and_ends_as_an_uninterrupted_one(
    dataset, tiny_mlm_dir, monkeypatch
):
    generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD, per_question=2)
    expected = sorted(generated(dataset).values_list("question_id", "text"))
    Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE).delete()
    QuestionGeneration.objects.all().delete()

    calls = []
    original = Manipulator.manipulate

    def crash_on_the_second_batch(self, items):
        calls.append(len(items))
        if len(calls) == 2:
            raise KeyboardInterrupt("worker killed")
        return original(self, items)

    monkeypatch.setattr(Manipulator, "manipulate", crash_on_the_second_batch)
    with pytest.raises(KeyboardInterrupt):
        generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD, per_question=2, batch_size=2)
    assert QuestionGeneration.objects.count() == 2  # the first batch was committed
    monkeypatch.setattr(Manipulator, "manipulate", original)
    report = generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD, per_question=2, batch_size=2)
    assert report["skipped_finished"] == 2
    assert sorted(generated(dataset).values_list("question_id", "text")) == expected


def test_another_setup_adds_its_own_negatives(dataset, tiny_mlm_dir):
    generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD, seed=0, per_question=2)
    before = generated(dataset).count()
    report = generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD, seed=1, per_question=2)
    assert report["skipped_finished"] == 0
    # the argmax negative is the same for both seeds: unique per question and text, it is not added twice
    assert generated(dataset).count() == before + report["candidates_added"] < before * 2


def test_a_failing_question_is_recorded_and_the_others_go_on(dataset, tiny_mlm_dir, monkeypatch):
    original = Manipulator.manipulate

    def fail_on_the_train(self, items):
        if any("train" in item.response for item in items):
            raise RuntimeError("model error")
        return original(self, items)

    monkeypatch.setattr(Manipulator, "manipulate", fail_on_the_train)
    report = generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD)
    failed = QuestionGeneration.objects.get(outcome=GenerationOutcome.FAILED)
    assert "train" in failed.question.ground_truth and "model error" in failed.error
    assert report["failed"] == 1 and report["generated"] == 3


def test_an_empty_ground_truth_is_an_error_naming_the_question_and_nothing_is_written(dataset, tiny_mlm_dir):
    blank = QuestionFactory(dataset=dataset, ground_truth="   ")
    with pytest.raises(UserError, match=rf"question\(s\) {blank.pk} have an empty ground truth"):
        generate(dataset, tiny_mlm_dir)
    assert not generated(dataset).exists() and not QuestionGeneration.objects.exists()


def test_a_rating_dataset_takes_no_negatives(tiny_mlm_dir):
    rating = DatasetFactory(name="ratings", task="rate")
    with pytest.raises(UserError, match="rates generated responses"):
        generate(rating, tiny_mlm_dir)


def test_a_checkpoint_that_is_not_a_masked_lm_is_an_error_naming_the_option(dataset, tiny_gpt2_dir):
    with pytest.raises(UserError, match=r"--mlm: .* not a masked language model"):
        generate(dataset, tiny_gpt2_dir)
    assert not QuestionGeneration.objects.exists()


def test_a_tokenizer_without_a_mask_token_is_an_error(dataset, tiny_mlm_dir, tmp_path):
    import shutil

    from transformers import AutoTokenizer

    folder = tmp_path / "no-mask"
    shutil.copytree(tiny_mlm_dir, folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.mask_token = None
    tokenizer.save_pretrained(folder)
    with pytest.raises(UserError, match="has no mask token"):
        generate(dataset, folder)


def test_without_a_model_the_setting_is_named(dataset, settings):
    settings.WELLCHOSEN_MLM_MODEL = ""
    with pytest.raises(UserError, match="^WELLCHOSEN_MLM_MODEL: no masked LM given"):
        negatives_generate(dataset_name=dataset.name)


def test_the_command_runs_a_gpu_job_with_named_phases(dataset, tiny_mlm_dir, capsys):
    assert job_kind_get("generate_negatives").queue == "gpu"
    call_command(
        "generate_negatives", "--dataset", dataset.name, "--mlm", str(tiny_mlm_dir), "--threshold=-1e9", "--skip-guard"
    )
    job = Job.objects.get(kind="generate_negatives")
    assert job.status == "succeeded" and job.result["generated"] == 4
    assert job.phase == "scoring and replacing words"
    assert '"candidates_added": 4' in capsys.readouterr().out


def test_the_command_reports_bad_settings(dataset, tiny_mlm_dir):
    with pytest.raises(CommandError, match="--max-mask-share must be above 0"):
        call_command(
            "generate_negatives", "--dataset", dataset.name, "--mlm", str(tiny_mlm_dir), "--max-mask-share", "0"
        )


def test_negatives_added_to_a_question_in_annotation_reopen_its_work(dataset, tiny_mlm_dir):
    from annotation.models import QuestionWork
    from annotation.services.assignment import annotation_open
    from tests.factories import AnnotatorFactory, ScoreFactory

    raters = AnnotatorFactory.create_batch(5)
    for question in dataset.questions.all():
        for rater in raters:
            ScoreFactory(candidate=question.candidates.get(is_ground_truth=True), annotator=rater, value=5)
    annotation_open(dataset=dataset)
    assert not QuestionWork.objects.filter(is_open=True).exists()  # every ground truth decided, nothing else
    report = generate(dataset, tiny_mlm_dir, threshold=EVERY_WORD)
    assert report["in_annotation"] == 4
    assert QuestionWork.objects.filter(is_open=True).count() == 4


def test_the_paper_mode_runs_as_a_setup_of_its_own(dataset, tiny_mlm_dir):
    # given negatives made in this project's setting
    call_command("generate_negatives", "--dataset", dataset.name, "--mlm", str(tiny_mlm_dir), "--skip-guard")
    # when the paper's setting runs on the same dataset
    call_command("generate_negatives", "--dataset", dataset.name, "--mlm", str(tiny_mlm_dir), "--skip-guard", "--paper")
    # then it is another setup: every question is processed again, per WordPiece token
    first, paper = Job.objects.filter(kind="generate_negatives").order_by("id")
    assert paper.result["settings"]["paper"] is True and paper.result["setup"] != first.result["setup"]
    assert paper.result["skipped_finished"] == 0
    rows = QuestionGeneration.objects.filter(setup=paper.result["setup"])
    assert rows.count() == len(GROUND_TRUTHS) and any(row.words for row in rows)
    assert all(row.words == row.tokens for row in rows)
