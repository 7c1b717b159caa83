"""The worker's side of crowd work: arriving by a batch's signed link (MTurk's ExternalQuestion is
crowd.providers.mturk_entry), getting the task's unit, and handing in scores (ours first, then,
where the platform has one, its form).

Crowd workers are Annotator rows of their provider with no Django user; they are identified by
the provider's parameters, checked against the published tasks, and the page they work on is
bound to their session by a signed token (crowd.selectors.unit_token).
"""

from django.utils import timezone

from annotation.models import Annotator, AssignmentStatus, QuestionWork
from annotation.services.submission import Answer, SubmitResult, unit_submit
from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdBatch, CrowdBatchStatus, CrowdTask, CrowdTaskStatus
from crowd.providers.entry import crowd_assignment_enter
from crowd.providers.link import WORKER_ID
from crowd.providers.registry import provider_for
from crowd.services.confirmation import crowd_scores_reconcile


def crowd_unit_submit(
    *, crowd_assignment: CrowdAssignment, answers: dict[str, Answer], duration_ms: int | None = None
) -> SubmitResult:
    """Save the worker's scores on our side first (exactly once); the page then posts to the provider.
    They count once the platform confirms the assignment (crowd.services.confirmation)."""
    if crowd_assignment.worker.is_blocked:
        raise UserError("this worker is blocked")
    result = unit_submit(
        assignment_id=crowd_assignment.assignment_id,
        annotator=crowd_assignment.worker,
        answers=answers,
        duration_ms=duration_ms,
        provider_ref=crowd_assignment.external_id,
        counted=False,
    )
    platform = provider_for(batch=crowd_assignment.batch)
    platform.unit_submitted(crowd_assignment=crowd_assignment)
    crowd_scores_reconcile(batch=crowd_assignment.batch, crowd_assignments=[crowd_assignment.pk], provider=platform)
    return result


def link_worker_ensure(*, batch: CrowdBatch, worker_id: str) -> Annotator:
    """The worker a link brings, by the id the platform gave them (made on their first visit)."""
    if not WORKER_ID.fullmatch(worker_id or ""):
        raise UserError("the link must carry your worker id (letters, digits, - _ . :, at most 64)")
    worker, _ = Annotator.objects.get_or_create(provider=batch.provider, external_id=worker_id)
    if worker.is_blocked:
        raise UserError("this worker is blocked")
    return worker


def link_unit_next(*, batch: CrowdBatch, worker: Annotator) -> CrowdAssignment | None:
    """The worker's current unit of the batch, or the next one; None when they are done (their
    quota of units_per_worker, or nothing left)."""
    if batch.status != CrowdBatchStatus.PUBLISHED:
        raise UserError("this study is closed")
    mine = CrowdAssignment.objects.filter(batch=batch, worker=worker).select_related("assignment")
    for ca in mine:
        if ca.assignment is not None and ca.assignment.status == AssignmentStatus.LEASED:
            if ca.assignment.leased_until >= timezone.now():
                return ca
    platform = provider_for(batch=batch)
    quota = platform.units_per_worker(batch=batch)
    done = mine.filter(assignment__status=AssignmentStatus.SUBMITTED).count()
    if done >= quota:
        return None
    open_questions = QuestionWork.objects.filter(dataset=batch.dataset, is_open=True).values("question_id")
    tasks = (
        CrowdTask.objects.filter(batch=batch, status=CrowdTaskStatus.PUBLISHED, question_id__in=open_questions)
        .exclude(question__assignments__annotator=worker)
        .order_by("pk")
    )
    for task in tasks[:50]:
        try:
            return crowd_assignment_enter(
                provider=batch.provider,
                external_id=f"{batch.pk}:{task.pk}:{worker.external_id}",
                batch=batch,
                task=task,
                worker=worker,
                lease_seconds=platform.lease_seconds(batch=batch),
            )
        except UserError:
            continue  # filled up meanwhile
    return None
