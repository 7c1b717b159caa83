"""Sending incorrect responses to annotators, and the filter rules' verdict on their scores."""

import pytest

from annotation.models import Candidate, CandidateSource
from core.errors import UserError
from pairs.models import AnnotatorVerdict, PairSet, Review
from pairs.services.annotators import pair_verdicts_refresh, pairs_send_to_annotators
from tests.factories import AnnotatorFactory, ScoreFactory

pytestmark = pytest.mark.django_db


def score(candidate, values, annotators):
    for annotator, value in zip(annotators, values, strict=True):
        ScoreFactory(candidate=candidate, annotator=annotator, value=value)


def test_each_pair_not_rejected_becomes_a_contrastive_candidate(built_set):
    rejected = built_set.pairs.first()
    rejected.review = Review.REJECTED
    rejected.save()
    report = pairs_send_to_annotators(pair_set=built_set)
    assert report["pairs_sent"] == report["candidates_added"] == 4
    for pair in built_set.pairs.exclude(pk=rejected.pk):
        assert pair.candidate.text == pair.incorrect and pair.candidate.question_id == pair.question_id
        assert pair.candidate.source == CandidateSource.CONTRASTIVE
        assert pair.candidate.provenance["pair"] == pair.pk
        assert pair.annotator_verdict == AnnotatorVerdict.UNDECIDED
    assert built_set.pairs.get(pk=rejected.pk).candidate is None


def test_sending_twice_adds_nothing(built_set):
    pairs_send_to_annotators(pair_set=built_set)
    again = pairs_send_to_annotators(pair_set=built_set)
    assert again["pairs_sent"] == again["candidates_added"] == 0
    assert Candidate.objects.filter(source=CandidateSource.CONTRASTIVE).count() == 5


def test_a_text_the_question_already_has_is_scored_once(built_set):
    pair = built_set.pairs.first()
    existing = pair.question.candidates.create(
        text=pair.incorrect, text_hash=pair.candidate_id or "x", source="lexical"
    )
    from core.text import text_hash

    existing.text_hash = text_hash(pair.incorrect)
    existing.save()
    report = pairs_send_to_annotators(pair_set=built_set)
    assert report["candidates_added"] == 4
    assert built_set.pairs.get(pk=pair.pk).candidate_id == existing.pk


def test_a_pair_that_differs_from_the_ground_truth_only_in_punctuation_is_not_sent(built_set):
    pair = built_set.pairs.first()
    pair.incorrect = pair.correct.rstrip(".") + "!"
    pair.save()
    report = pairs_send_to_annotators(pair_set=built_set)
    assert report["same_words_as_ground_truth"] == 1
    assert built_set.pairs.get(pk=pair.pk).candidate is None


def test_an_imported_set_has_no_questions_to_join():
    set_ = PairSet.objects.create(name="hand")
    with pytest.raises(UserError, match="imported"):
        pairs_send_to_annotators(pair_set=set_)


@pytest.mark.parametrize(
    ("truth", "incorrect", "verdict"),
    [
        ([5, 5, 5, 4, 5], [1, 1, 2, 1, 1], AnnotatorVerdict.KEPT),
        ([5, 5, 5, 4, 5], [4, 3, 5, 1, 1], AnnotatorVerdict.ACCEPTABLE),
        ([5, 5, 5, 4, 5], [0, 0, 0, 1, 1], AnnotatorVerdict.UNGRAMMATICAL),
        ([5, 5, 5, 4, 5], [1, 1], AnnotatorVerdict.UNDECIDED),
        ([2, 3, 1, 5, 5], [1, 1, 1, 1, 1], AnnotatorVerdict.GROUND_TRUTH_REJECTED),
    ],
)
def test_the_filter_rules_decide_on_the_incorrect_response(built_set, truth, incorrect, verdict):
    pairs_send_to_annotators(pair_set=built_set)
    pair = built_set.pairs.select_related("candidate", "question").first()
    annotators = AnnotatorFactory.create_batch(5)
    score(pair.question.candidates.get(is_ground_truth=True), truth, annotators)
    score(pair.candidate, incorrect, annotators[: len(incorrect)])
    counts = pair_verdicts_refresh(pair_set=built_set)
    pair.refresh_from_db()
    assert pair.annotator_verdict == verdict
    assert sum(counts.values()) == 5
