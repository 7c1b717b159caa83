"""Taking an annotator's scores for a unit: validated, stored exactly once, decisions updated."""

import logging
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from annotation.models import DEFAULT_ERROR_LABELS, Annotator, Assignment, AssignmentStatus, QuestionWork, Score
from core.errors import UserError

from .assignment import _free_slots, work_refresh
from .quality import quality_refresh_soon

logger = logging.getLogger(__name__)

# An unrelated response should be scored "not appropriate at all": 1, or 0 ("ungrammatical") on the
# 0-5 scale of test-set building; on the 1-5 rating scale only 1 passes.
ATTENTION_CHECK_MAX = 1
# The time a unit took, as the page measured it: a unit takes minutes and its lease far less than a
# day, so a day is the most a real page can send (and well inside the database's integer).
MAX_DURATION_MS = 24 * 60 * 60 * 1000


@dataclass
class Answer:
    value: int
    labels: list[str] = field(default_factory=list)


@dataclass
class SubmitResult:
    assignment: Assignment
    created: bool  # False when this was a repeated submission (nothing changed)


def unit_submit(
    *,
    assignment_id: int,
    annotator: Annotator,
    answers: dict[str, Answer],
    duration_ms: int | None = None,
    provider_ref: str = "",
    counted: bool = True,
) -> SubmitResult:
    """Store the scores of one unit. A second submission of the same unit changes nothing; a
    submission after the lease was reclaimed is taken only while the unit still has a free slot.
    ``counted=False``: stored and shown, but no evidence until confirmed (a crowd worker's scores
    before the platform has confirmed the assignment)."""
    duration_check(duration_ms=duration_ms)
    with transaction.atomic():
        assignment = assignment_locked(assignment_id=assignment_id, annotator=annotator)
        if assignment.status == AssignmentStatus.SUBMITTED:
            return SubmitResult(assignment, created=False)
        if assignment.status == AssignmentStatus.RELEASED:
            raise UserError("this unit was taken back (the annotator was blocked)")
        if assignment.status == AssignmentStatus.EXPIRED:
            _retake_slot(assignment)
        dataset = assignment.question.dataset
        scores, check_value = _validate(
            assignment, answers, labels=dataset.error_labels or DEFAULT_ERROR_LABELS, low=dataset.min_score
        )
        per_item_ms = duration_ms // max(1, len(assignment.items)) if duration_ms else None
        Score.objects.bulk_create(
            [
                Score(
                    candidate_id=candidate_id,
                    annotator=annotator,
                    value=answer.value,
                    labels=answer.labels,
                    assignment=assignment,
                    assignment_ref=provider_ref or assignment.provider_ref,
                    duration_ms=per_item_ms,
                    counted=counted,
                )
                for candidate_id, answer in scores
            ]
        )
        assignment.status = AssignmentStatus.SUBMITTED
        assignment.submitted_at = timezone.now()
        assignment.duration_ms = duration_ms
        assignment.check_value = check_value
        assignment.check_passed = None if check_value is None else check_value <= ATTENTION_CHECK_MAX
        if provider_ref:
            assignment.provider_ref = provider_ref
        assignment.save(
            update_fields=["status", "submitted_at", "duration_ms", "check_value", "check_passed", "provider_ref"]
        )
        work_refresh(question_id=assignment.question_id)
        dataset_id = dataset.pk
        transaction.on_commit(lambda: quality_refresh_soon(dataset_id=dataset_id))
    return SubmitResult(assignment, created=True)


def assignment_locked(*, assignment_id: int, annotator: Annotator) -> Assignment:
    """The annotator's unit, its row locked for this transaction (with its question and dataset);
    a UserError when it is not theirs.

    Only the assignment row is locked, and with FOR NO KEY UPDATE: a plain FOR UPDATE over the join
    also locked the question and the dataset row that every submission shares, and waited on the
    key-share lock another annotator's new unit takes on the question while it holds that
    question's QuestionWork row, which the caller updates next: a deadlock."""
    assignment = (
        Assignment.objects.select_for_update(of=("self",), no_key=True)
        .select_related("question__dataset")
        .filter(pk=assignment_id, annotator=annotator)
        .first()
    )
    if assignment is None:
        raise UserError("no such unit for this annotator")
    return assignment


def duration_check(*, duration_ms: int | None) -> int | None:
    """The time taken in milliseconds, from 0 to MAX_DURATION_MS, or None when the page sent none."""
    if duration_ms is not None and (
        isinstance(duration_ms, bool) or not isinstance(duration_ms, int) or not 0 <= duration_ms <= MAX_DURATION_MS
    ):
        raise UserError(f"duration_ms must be a whole number of milliseconds from 0 to {MAX_DURATION_MS} (24 hours)")
    return duration_ms


def _retake_slot(assignment: Assignment) -> None:
    """A late submission: accept it if the unit can still use another annotator, so no work is lost."""
    taken = QuestionWork.objects.filter(pk=assignment.question_id, slots_taken__lt=F("slots_needed")).update(
        slots_taken=F("slots_taken") + 1
    )
    if not taken:
        raise UserError("the time for this unit ran out and other annotators have completed it")
    assignment.status = AssignmentStatus.LEASED


def _validate(assignment: Assignment, answers: dict[str, Answer], *, labels: list[str], low: int):
    """``low``: the lowest score of the dataset's scale (0 when selecting, 1 when rating)."""
    expected = {item["key"]: item for item in assignment.items}
    unknown = set(answers) - set(expected)
    if unknown:
        raise UserError(f"answers for responses that are not in this unit: {', '.join(sorted(unknown))}")
    missing = [key for key in expected if key not in answers]
    if missing:
        raise UserError(f"{len(missing)} response(s) have no score yet")
    scores, check_value = [], None
    for key, item in expected.items():
        answer = answers[key]
        if isinstance(answer.value, bool) or not isinstance(answer.value, int) or not low <= answer.value <= 5:
            raise UserError(f"score {answer.value!r} is not an integer from {low} to 5")
        bad = [label for label in answer.labels if label not in labels]
        if bad:
            raise UserError(f"unknown label(s): {', '.join(bad)}")
        if answer.labels and answer.value > 2:
            raise UserError("reasons can only be given for scores of 2 or less")
        if item.get("check"):
            check_value = answer.value
        else:
            scores.append((item["candidate_id"], answer))
    return scores, check_value


def unit_discard(*, assignment_id: int, reason: str) -> bool:
    """Take back a unit whose work must not count (a crowd assignment its platform never
    confirmed): its scores are deleted, the slot it held goes to another annotator, and it cannot
    be submitted again. Returns False when there was nothing to take back."""
    with transaction.atomic():
        assignment = Assignment.objects.select_for_update(no_key=True).filter(pk=assignment_id).first()
        if assignment is None or assignment.status == AssignmentStatus.RELEASED:
            return False
        # An expired lease gave its slot back already; a live lease or a submission still holds one.
        holds_slot = assignment.status in (AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED)
        deleted, _ = Score.objects.filter(assignment=assignment).delete()
        Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.RELEASED)
        if holds_slot:
            _free_slots([assignment.question_id])
        work_refresh(question_id=assignment.question_id)
        dataset_id = assignment.question.dataset_id
        transaction.on_commit(lambda: quality_refresh_soon(dataset_id=dataset_id))
    logger.warning(
        "unit %s of annotator %s discarded (%d scores): %s", assignment_id, assignment.annotator_id, deleted, reason
    )
    return True


def unit_scores_count(*, assignments: QuerySet[Assignment], counted: bool) -> int:
    """Make the scores of these units count, or stop counting (their platform confirmed the work,
    or withdrew it); the decisions of their questions are recomputed. Returns how many changed."""
    with transaction.atomic():
        changing = Score.objects.filter(assignment__in=assignments, counted=not counted)
        touched = set(changing.values_list("candidate__question_id", "candidate__question__dataset_id"))
        changed = changing.update(counted=counted)
        for question_id in sorted({question_id for question_id, _ in touched}):
            work_refresh(question_id=question_id)
        for dataset_id in {dataset_id for _, dataset_id in touched}:
            transaction.on_commit(lambda dataset_id=dataset_id: quality_refresh_soon(dataset_id=dataset_id))
    return changed
