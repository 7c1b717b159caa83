"""An annotator corrects the scores of a unit they submitted, within a short window: each changed
score keeps its old value as a ScoreRevision, and the Score row itself (one per annotator and
candidate, the only one that counts) takes the new one."""

from django.db import transaction
from django.utils import timezone

from annotation.models import DEFAULT_ERROR_LABELS, Annotator, Score, ScoreRevision
from annotation.selectors_annotators import correction_deadline
from core.errors import UserError

from .assignment import work_refresh
from .quality import quality_refresh_soon
from .submission import Answer, _validate, assignment_locked


def unit_correct(*, assignment_id: int, annotator: Annotator, answers: dict[str, Answer]) -> int:
    """Correct the scores of the annotator's submitted unit ``assignment_id`` with ``answers`` (every
    response of the unit, as when it was submitted). Returns how many scores changed: sending the
    same answers again changes nothing. A UserError after the window, for another's unit or for a
    unit not submitted. An attention check's answer is the one first given: it cannot be corrected."""
    with transaction.atomic():
        assignment = assignment_locked(assignment_id=assignment_id, annotator=annotator)
        deadline = correction_deadline(assignment)
        if deadline is None:
            raise UserError("only a submitted unit's scores can be corrected")
        if timezone.now() > deadline:
            raise UserError("the time to correct this unit has passed")
        dataset = assignment.question.dataset
        scores, _ = _validate(
            assignment, answers, labels=dataset.error_labels or DEFAULT_ERROR_LABELS, low=dataset.min_score
        )
        stored = {s.candidate_id: s for s in Score.objects.select_for_update().filter(assignment=assignment)}
        changed = []
        for candidate_id, answer in scores:
            score = stored.get(candidate_id)
            if score is None:  # taken back since (a discarded crowd unit): nothing to correct
                raise UserError("this unit's scores were taken back; they cannot be corrected")
            if (score.value, list(score.labels)) != (answer.value, list(answer.labels)):
                changed.append((score, answer))
        if not changed:
            return 0
        ScoreRevision.objects.bulk_create(
            [ScoreRevision(score=score, value=score.value, labels=score.labels) for score, _ in changed]
        )
        for score, answer in changed:
            score.value, score.labels = answer.value, answer.labels
        Score.objects.bulk_update([score for score, _ in changed], ["value", "labels"])
        work_refresh(question_id=assignment.question_id)  # the rule decisions follow the new scores
        transaction.on_commit(lambda: quality_refresh_soon(dataset_id=dataset.pk))
    return len(changed)
