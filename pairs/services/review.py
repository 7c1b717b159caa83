"""A researcher's review of a pair: accept, reject, or edit the incorrect response (which accepts
it). Idempotent: the same decision twice (a double click) leaves one state and one timestamp."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import UserError
from pairs.models import Pair, Review
from pairs.services.building import pair_key
from pairs.text import edit_spans

DECISIONS = {"accept": Review.ACCEPTED, "reject": Review.REJECTED, "pending": Review.PENDING}


def pair_review(*, pair_id: int, decision: str, user=None) -> Pair:
    state = DECISIONS.get(decision)
    if state is None:
        raise UserError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    with transaction.atomic():
        pair = Pair.objects.select_for_update().filter(pk=pair_id).first()
        if pair is None:
            raise UserError(f"no pair #{pair_id}")
        if pair.review != state:
            pair.review = state
            pair.reviewed_by = user if state != Review.PENDING else None
            pair.reviewed_at = timezone.now() if state != Review.PENDING else None
            pair.save(update_fields=["review", "reviewed_by", "reviewed_at"])
    return pair


def pair_edit(*, pair_id: int, incorrect: str, user=None) -> Pair:
    """Replace the incorrect response with the reviewer's text and accept the pair. The rule's
    text stays in ``generated_incorrect``; the highlighted spans follow the new text."""
    incorrect = incorrect.strip()
    with transaction.atomic():
        pair = Pair.objects.select_for_update().filter(pk=pair_id).first()
        if pair is None:
            raise UserError(f"no pair #{pair_id}")
        if not incorrect:
            raise UserError("the incorrect response cannot be empty")
        if incorrect == pair.correct:
            raise UserError("the incorrect response must differ from the correct one")
        if pair.candidate_id is not None and incorrect != pair.incorrect:
            raise UserError("this pair's incorrect response is being scored by annotators: it can no longer change")
        (cs, ce), (is_, ie) = edit_spans(pair.correct, incorrect)
        pair.incorrect = incorrect
        pair.correct_start, pair.correct_end, pair.incorrect_start, pair.incorrect_end = cs, ce, is_, ie
        pair.key = pair_key(pair.context, pair.correct, incorrect)
        pair.review = Review.ACCEPTED
        pair.reviewed_by = user
        pair.reviewed_at = timezone.now()
        try:
            with transaction.atomic():
                pair.save()
        except IntegrityError:
            raise UserError("another pair of this set already has this incorrect response") from None
    return pair
