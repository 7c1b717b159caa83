"""Researchers block and unblock annotators; a block can also take their scores out of filtering."""

from django.db import transaction

from annotation.models import Annotator, Assignment, AssignmentStatus, QuestionWork

from .assignment import _free_slots, work_refresh


def annotator_block(*, annotator: Annotator, exclude_scores: bool = False) -> int:
    """Block: no new units, open leases released (their slots go to others). With
    ``exclude_scores`` their scores stop counting, so affected questions may reopen.
    Returns the number of released leases."""
    with transaction.atomic():
        Annotator.objects.filter(pk=annotator.pk).update(is_blocked=True, scores_excluded=exclude_scores)
        leased = list(
            Assignment.objects.select_for_update()
            .filter(annotator=annotator, status=AssignmentStatus.LEASED)
            .values_list("pk", "question_id")
        )
        Assignment.objects.filter(pk__in=[pk for pk, _ in leased]).update(status=AssignmentStatus.RELEASED)
        _free_slots([question_id for _, question_id in leased])
    if exclude_scores:
        _refresh_scored(annotator)
    annotator.refresh_from_db()
    return len(leased)


def annotator_unblock(*, annotator: Annotator, include_scores: bool = True) -> None:
    with transaction.atomic():
        Annotator.objects.filter(pk=annotator.pk).update(
            is_blocked=False, scores_excluded=False if include_scores else annotator.scores_excluded
        )
    _refresh_scored(annotator)
    annotator.refresh_from_db()


def _refresh_scored(annotator: Annotator) -> None:
    question_ids = (
        QuestionWork.objects.filter(question__candidates__scores__annotator=annotator)
        .values_list("question_id", flat=True)
        .distinct()
    )
    for question_id in question_ids:
        work_refresh(question_id=question_id)
