"""Every question that receives no negative is counted under one reason, and the summary's counts
match the candidates in the database: the questions counted under a reason are exactly those left
without a generated candidate for it."""

import pytest
from django.urls import reverse

from annotation.models import Candidate, CandidateSource, Turn
from core.job_registry import job_kind_get
from core.text import text_hash
from negatives.job_params import GenerateNegativesParams
from negatives.manipulation import Manipulation, ManipulationSettings, Manipulator, Negative, WordScore
from negatives.models import NO_NEGATIVE_REASONS, QuestionGeneration
from negatives.services.generation import negatives_generate
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory

pytestmark = pytest.mark.django_db
RECEIVES = "The bus leaves at ten."
TRUTH = "The train leaves at nine."
CONTEXT = "Hello there ."
POOL = "A pool candidate."


@pytest.fixture
def questions():
    """Two questions: the first will receive a negative, the second none (for the reason tested)."""
    dataset = DatasetFactory(name="reasons")
    made = [QuestionFactory(dataset=dataset, ground_truth=truth) for truth in (RECEIVES, TRUTH)]
    for question in made:
        Turn.objects.filter(context=question.context).update(text=CONTEXT, text_hash=text_hash(CONTEXT))
    CandidateFactory(question=made[1], text=POOL, source=CandidateSource.LEXICAL)
    return made


def manipulation(*texts: str, outcome: str = "generated") -> Manipulation:
    word = WordScore(index=0, text="train", score=1.0, logp_context=0.0, logp_alone=-1.0)
    return Manipulation(
        outcome=outcome,
        words=[word],
        selected=[0] if outcome == "generated" else [],
        negatives=[Negative(text=t, sample=n, replacements=[]) for n, t in enumerate(texts)],
        tokens=1,
        tokens_selected=1 if outcome == "generated" else 0,
    )


# what the second question's manipulation gives, for each reason it receives no negative
SECOND = {
    "no_word_selected": lambda: manipulation(outcome="no_word_selected"),
    "punctuation_only": lambda: manipulation(outcome="punctuation_only"),
    "several_pieces_only": lambda: manipulation(outcome="several_pieces_only"),
    "unchanged": lambda: manipulation(),  # a word selected, but no negative made
    "ground_truth": lambda: manipulation("the train leaves at nine."),
    "context": lambda: manipulation("Hello there."),
    "duplicate": lambda: manipulation(POOL),
}


@pytest.mark.parametrize("reason", sorted(SECOND))
def test_each_reason_counts_the_questions_left_without_a_negative(questions, reason, tiny_mlm_dir, monkeypatch):
    # given a first question that receives a negative and a second that receives none for the reason
    def manipulate(self, items):
        return [manipulation("A brand new one.") if i.response == RECEIVES else SECOND[reason]() for i in items]

    monkeypatch.setattr(Manipulator, "manipulate", manipulate)
    report = negatives_generate(dataset_name="reasons", mlm_path=str(tiny_mlm_dir), settings=ManipulationSettings())
    # then the reason's count is the questions without a generated candidate in the database
    without = Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE).values("question")
    left = QuestionGeneration.objects.exclude(question__in=without)
    assert report["without_negative"][reason] == left.count() == 1
    assert left.get().question == questions[1] and left.get().without_negative == reason
    assert sum(report["without_negative"].values()) + report["questions_with_negative"] == report["questions"]
    # and the summary says it with the count
    summary = job_kind_get(GenerateNegativesParams.kind).params(dataset="reasons").summary(report)
    assert f"questions without a negative: 1 {NO_NEGATIVE_REASONS[reason]}." in summary
    assert summary.startswith("Negatives for 1 of 2 questions")


PUNCTUATED = "Yes , you did ."
SPLIT = "The quixotically zygomorphic bus leaves at ten ."  # words the tiny tokenizer splits


def generate_where(monkeypatch, mlm_dir, *, above, ground_truth, settings=ManipulationSettings()) -> dict:
    """negatives_generate on one question whose words score above the threshold where ``above(word)``."""

    def score(self, encoded):
        return [[WordScore(w.index, w.text, 5.0 if above(w) else -5.0, 0.0, 0.0) for w in enc.words] for enc in encoded]

    monkeypatch.setattr(Manipulator, "score", score)
    QuestionFactory(dataset=DatasetFactory(name="one"), ground_truth=ground_truth)
    return negatives_generate(dataset_name="one", mlm_path=str(mlm_dir), settings=settings)


def punctuation(word) -> bool:
    return not word.text.isalnum()


def several_pieces(word) -> bool:
    return len(word.pieces) > 1


def test_a_response_whose_only_words_above_the_threshold_are_punctuation_is_punctuation_only(tiny_mlm_dir, monkeypatch):
    # given scores where only the punctuation mark clears the threshold
    report = generate_where(monkeypatch, tiny_mlm_dir, above=punctuation, ground_truth=PUNCTUATED)
    # then no word is replaced, and the reason is punctuation, not the threshold
    assert report["without_negative"]["punctuation_only"] == report["punctuation_only"] == 1
    assert report["no_word_selected"] == 0
    assert not Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE).exists()


def test_a_response_whose_only_words_above_the_threshold_have_several_pieces_gets_none(tiny_mlm_dir, monkeypatch):
    # given scores where only words the tokenizer splits clear the threshold ("debit" -> "de"
    # "##bit" would come back as "car" "##ist")
    report = generate_where(monkeypatch, tiny_mlm_dir, above=several_pieces, ground_truth=SPLIT)
    # then no word is replaced, and the reason says why
    assert report["without_negative"]["several_pieces_only"] == report["several_pieces_only"] == 1
    assert report["no_word_selected"] == report["punctuation_only"] == 0
    assert not Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE).exists()


def test_without_single_piece_words_a_word_of_several_pieces_is_replaced(tiny_mlm_dir, monkeypatch):
    settings = ManipulationSettings(single_piece_words=False)
    report = generate_where(monkeypatch, tiny_mlm_dir, above=several_pieces, ground_truth=SPLIT, settings=settings)
    assert report["generated"] == 1 and report["without_negative"]["several_pieces_only"] == 0


def test_with_punctuation_on_the_same_response_gets_a_negative(tiny_mlm_dir, monkeypatch):
    settings = ManipulationSettings(punctuation=True)
    report = generate_where(monkeypatch, tiny_mlm_dir, above=punctuation, ground_truth=PUNCTUATED, settings=settings)
    assert report["generated"] == 1 and report["without_negative"]["punctuation_only"] == 0


def test_the_workspace_shows_the_latest_runs_reasons_and_both_shares(
    questions, tiny_mlm_dir, monkeypatch, admin_client
):
    def manipulate(self, items):
        return [manipulation("A brand new one.") if i.response == RECEIVES else SECOND["unchanged"]() for i in items]

    monkeypatch.setattr(Manipulator, "manipulate", manipulate)
    negatives_generate(dataset_name="reasons", mlm_path=str(tiny_mlm_dir), settings=ManipulationSettings())
    page = admin_client.get(reverse("dashboard-dataset", args=["reasons"])).content.decode()
    step = page.split('id="step-negatives"')[1].split("</section>")[0]
    assert "latest run: questions that received a negative" in step
    assert f"without a negative: {NO_NEGATIVE_REASONS['unchanged']}" in step
    assert "words replaced" in step and "WordPiece tokens replaced" in step
