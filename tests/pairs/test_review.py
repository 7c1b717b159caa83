"""A researcher's decisions on pairs: accept, reject, edit; repeats change nothing."""

import pytest

from core.errors import UserError
from pairs.models import Review
from pairs.services.building import pair_key
from pairs.services.review import pair_edit, pair_review
from tests.factories import CandidateFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(built_set):
    return built_set.pairs.get(correct="He wants to borrow the car.")


def test_accept_records_who_and_when(pair):
    user = UserFactory()
    reviewed = pair_review(pair_id=pair.pk, decision="accept", user=user)
    assert reviewed.review == Review.ACCEPTED
    assert reviewed.reviewed_by == user and reviewed.reviewed_at is not None


def test_a_repeated_decision_keeps_the_first_timestamp(pair):
    first = pair_review(pair_id=pair.pk, decision="reject").reviewed_at
    again = pair_review(pair_id=pair.pk, decision="reject")
    assert again.review == Review.REJECTED and again.reviewed_at == first


def test_back_to_pending_clears_the_reviewer(pair):
    pair_review(pair_id=pair.pk, decision="accept", user=UserFactory())
    pending = pair_review(pair_id=pair.pk, decision="pending")
    assert pending.review == Review.PENDING and pending.reviewed_by is None and pending.reviewed_at is None


def test_an_unknown_decision_is_refused(pair):
    with pytest.raises(UserError, match="decision must be one of"):
        pair_review(pair_id=pair.pk, decision="maybe")


def test_an_edit_replaces_the_incorrect_response_and_accepts_the_pair(pair):
    edited = pair_edit(pair_id=pair.pk, incorrect="He wants to borrow the boat.")
    edited.refresh_from_db()
    assert edited.incorrect == "He wants to borrow the boat."
    assert edited.generated_incorrect == "He wants to borrow WRONG car."
    assert edited.edited and edited.review == Review.ACCEPTED
    assert edited.correct[edited.correct_start : edited.correct_end] == "car"
    assert edited.incorrect[edited.incorrect_start : edited.incorrect_end] == "boat"


def test_an_edit_equal_to_the_correct_response_is_refused(pair):
    with pytest.raises(UserError, match="must differ"):
        pair_edit(pair_id=pair.pk, incorrect="He wants to borrow the car.")


def test_an_empty_edit_is_refused(pair):
    with pytest.raises(UserError, match="cannot be empty"):
        pair_edit(pair_id=pair.pk, incorrect="   ")


def test_an_edit_that_duplicates_another_pair_of_the_set_is_refused(built_set, pair):
    other = built_set.pairs.exclude(pk=pair.pk).first()
    other.correct, other.context, other.question = pair.correct, pair.context, pair.question
    other.incorrect = "He wants to borrow the bike."
    other.key = pair_key(other.context, other.correct, other.incorrect)
    other.save()
    with pytest.raises(UserError, match="already has this incorrect response"):
        pair_edit(pair_id=pair.pk, incorrect="He wants to borrow the bike.")
    pair.refresh_from_db()
    assert pair.incorrect == "He wants to borrow WRONG car."


def test_a_pair_being_scored_by_annotators_cannot_be_edited(pair):
    pair.candidate = CandidateFactory(question=pair.question, text=pair.incorrect)
    pair.save()
    with pytest.raises(UserError, match="being scored by annotators"):
        pair_edit(pair_id=pair.pk, incorrect="He wants to borrow the boat.")
