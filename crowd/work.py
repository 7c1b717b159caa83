"""The worker's side of crowd work: arriving from a provider (MTurk assignment parameters, a signed
link), getting the task's unit, and handing in scores (ours first, then the provider's form).

Crowd workers are Annotator rows of their provider with no Django user; they are identified by
the provider's parameters, checked here against the published tasks, and the page they work on is
bound to their session by a signed token.
"""

import json
import re
from urllib.parse import urlsplit

from django.conf import settings
from django.core import signing
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Annotator, Assignment, AssignmentStatus
from annotation.services.assignment import unit_lease_question
from annotation.services.submission import Answer, SubmitResult, unit_submit
from core.errors import UserError
from crowd.models import (
    CrowdAssignment,
    CrowdAssignmentStatus,
    CrowdBatch,
    CrowdBatchStatus,
    CrowdProvider,
    CrowdTask,
    CrowdTaskStatus,
)

PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
_MTURK_ID = re.compile(r"^[A-Z0-9]{1,64}$")
_SALT = "wellchosen.crowd.unit"


def submit_to_check(*, url: str) -> str:
    """turkSubmitTo must be one of the allowed MTurk origins exactly (else anyone could make our page
    post the worker's form to their own site); the defaults are MTurk's two https origins. Returns
    the externalSubmit address."""
    parts = urlsplit(url or "")
    origin = f"{parts.scheme}://{parts.netloc}"
    allowed = {u.rstrip("/") for u in settings.WELLCHOSEN_CROWD_SUBMIT_HOSTS}
    if parts.scheme not in ("https", "http") or origin not in allowed or parts.path not in ("", "/") or parts.query:
        raise UserError(f"turkSubmitTo {url!r} is not an allowed MTurk address")
    return f"{origin}/mturk/externalSubmit"


def task_for_hit(*, hit_id: str) -> CrowdTask:
    task = (
        CrowdTask.objects.select_related("batch", "question")
        .filter(provider=CrowdProvider.MTURK, external_id=hit_id)
        .first()
    )
    if task is None or task.status == CrowdTaskStatus.PENDING:
        raise UserError("this HIT is not one of ours, or is not published")
    return task


def mturk_enter(*, hit_id: str, assignment_id: str, worker_id: str, submit_to: str) -> CrowdAssignment:
    """A worker accepted a HIT: check the (worker, assignment, HIT) triple and lease them the unit."""
    submit_to_check(url=submit_to)
    for name, value in (("assignmentId", assignment_id), ("workerId", worker_id), ("hitId", hit_id)):
        if not _MTURK_ID.match(value or ""):
            raise UserError(f"{name} is missing or malformed")
    task = task_for_hit(hit_id=hit_id)
    if task.status != CrowdTaskStatus.PUBLISHED or task.batch.status != CrowdBatchStatus.PUBLISHED:
        if not CrowdAssignment.objects.filter(provider=CrowdProvider.MTURK, external_id=assignment_id).exists():
            raise UserError("this HIT has expired")
    worker, _ = Annotator.objects.get_or_create(provider=CrowdProvider.MTURK, external_id=worker_id)
    return _enter(
        provider=CrowdProvider.MTURK,
        external_id=assignment_id,
        batch=task.batch,
        task=task,
        worker=worker,
        submit_to=submit_to.rstrip("/"),
    )


def _enter(
    *, provider: str, external_id: str, batch: CrowdBatch, task: CrowdTask, worker: Annotator, submit_to: str = ""
) -> CrowdAssignment:
    lease = int((batch.settings or {}).get("assignment_duration_seconds") or 0) or None
    if provider == CrowdProvider.MTURK:
        from .mturk import mturk_settings

        lease = mturk_settings(batch)["assignment_duration_seconds"]  # MTurk's own deadline
    with transaction.atomic():
        ca = CrowdAssignment.objects.select_for_update().filter(provider=provider, external_id=external_id).first()
        if ca is None:
            try:
                with transaction.atomic():
                    ca = CrowdAssignment.objects.create(
                        provider=provider,
                        external_id=external_id,
                        batch=batch,
                        task=task,
                        worker=worker,
                        submit_to=submit_to,
                    )
            except IntegrityError:
                ca = CrowdAssignment.objects.select_for_update().get(provider=provider, external_id=external_id)
        if ca.worker_id != worker.pk or ca.task_id != task.pk:
            raise UserError("this assignment belongs to another worker or HIT")
        if ca.assignment_id is not None and ca.assignment.status == AssignmentStatus.SUBMITTED:
            return ca
        assignment = unit_lease_question(
            annotator=worker, question_id=task.question_id, lease_seconds=lease, provider_ref=external_id
        )
        # A worker who returned the HIT and took it again comes with a new assignment id.
        CrowdAssignment.objects.filter(assignment=assignment).exclude(pk=ca.pk).update(
            assignment=None, status=CrowdAssignmentStatus.RETURNED
        )
        ca.assignment = assignment
        ca.save(update_fields=["assignment"])
    return ca


def unit_token(*, crowd_assignment: CrowdAssignment) -> str:
    """Signed id of the worker's crowd assignment: the capability their page submits with (MTurk
    frames our page on another site, where the browser may withhold our session cookie)."""
    return signing.dumps({"ca": crowd_assignment.pk, "w": crowd_assignment.worker_id}, salt=_SALT)


def unit_from_token(*, token: str, max_age_seconds: int = 7 * 86400) -> CrowdAssignment:
    try:
        data = signing.loads(token, salt=_SALT, max_age=max_age_seconds)
    except signing.BadSignature as exc:
        raise UserError("this work link is not valid (or has expired)") from exc
    ca = (
        CrowdAssignment.objects.select_related("assignment__question__dataset", "worker", "batch", "task")
        .filter(pk=data.get("ca"), worker_id=data.get("w"))
        .first()
    )
    if ca is None or ca.assignment is None:
        raise UserError("this work link is not valid")
    return ca


def crowd_unit_submit(
    *, crowd_assignment: CrowdAssignment, answers: dict[str, Answer], duration_ms: int | None = None
) -> SubmitResult:
    """Save the worker's scores on our side first (exactly once); the page then posts to the provider."""
    if crowd_assignment.worker.is_blocked:
        raise UserError("this worker is blocked")
    result = unit_submit(
        assignment_id=crowd_assignment.assignment_id,
        annotator=crowd_assignment.worker,
        answers=answers,
        duration_ms=duration_ms,
        provider_ref=crowd_assignment.external_id,
    )
    if crowd_assignment.provider == CrowdProvider.LINK:
        CrowdAssignment.objects.filter(pk=crowd_assignment.pk, status=CrowdAssignmentStatus.ACCEPTED).update(
            status=CrowdAssignmentStatus.SUBMITTED, submitted_at=timezone.now()
        )
    return result


def answers_encode(answers: dict[str, Answer]) -> str:
    """The scores as posted to MTurk with the assignment: sync can recover them from there."""
    return json.dumps({key: [a.value, a.labels] for key, a in sorted(answers.items())}, separators=(",", ":"))


def answers_recover(*, crowd_assignment: CrowdAssignment, assignment: Assignment) -> bool:
    """Scores MTurk has but we do not (our save failed after the worker's form went out): store
    them from the answer MTurk kept. Returns True when scores were stored."""
    raw = (crowd_assignment.answer or {}).get("answers")
    if not raw:
        return False
    try:
        data = json.loads(raw)
        answers = {key: Answer(int(value), list(labels)) for key, (value, labels) in data.items()}
    except (ValueError, TypeError, AttributeError):
        return False
    try:
        result = unit_submit(
            assignment_id=assignment.pk,
            annotator=crowd_assignment.worker,
            answers=answers,
            provider_ref=crowd_assignment.external_id,
        )
    except UserError:
        return False
    return result.created
