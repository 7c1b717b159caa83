"""Importing MTurk's submitted assignments: every HIT's list, page by page, each assignment in its
own transaction and exactly once (unique provider + assignment id), reconciled with our scores
(recovered from MTurk's copy of the answer where ours were never saved)."""

import json
import xml.etree.ElementTree as ET

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Annotator, AnnotatorProvider, Assignment, AssignmentStatus
from annotation.services.submission import Answer, unit_submit
from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdAssignmentStatus, CrowdBatch, CrowdTask, CrowdTaskStatus

from .base import SyncReport
from .mturk_client import MTURK_ENTITY_ID, MTURK_WORKER_ID, MTurk

ASSIGNMENT_STATUSES = ["Submitted", "Approved", "Rejected"]
_STATUS = {
    "Submitted": CrowdAssignmentStatus.SUBMITTED,
    "Approved": CrowdAssignmentStatus.APPROVED,
    "Rejected": CrowdAssignmentStatus.REJECTED,
}


def hits_sync(*, api: MTurk, batch: CrowdBatch) -> SyncReport:
    """ListAssignmentsForHIT (MaxResults 100, NextToken) for every published or expired HIT."""
    report = SyncReport()
    tasks = batch.tasks.filter(status__in=[CrowdTaskStatus.PUBLISHED, CrowdTaskStatus.EXPIRED]).exclude(external_id="")
    for task in tasks.select_related("question"):
        report.tasks += 1
        for item in api.paginate(
            "list_assignments_for_hit", "Assignments", HITId=task.external_id, AssignmentStatuses=ASSIGNMENT_STATUSES
        ):
            report.seen += 1
            assignment_import(batch=batch, task=task, item=item, report=report)
    report.saved_here_not_submitted = CrowdAssignment.objects.filter(
        batch=batch, imported_at__isnull=True, assignment__status=AssignmentStatus.SUBMITTED
    ).count()
    return report


def parse_answer(xml: str) -> dict[str, str]:
    """QuestionFormAnswers XML -> {QuestionIdentifier: FreeText}."""
    if not xml:
        return {}
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return {}
    found = {}
    for answer in root.iter():
        if answer.tag.endswith("Answer") and not answer.tag.endswith("QuestionFormAnswers"):
            name = text = None
            for child in answer:
                if child.tag.endswith("QuestionIdentifier"):
                    name = child.text
                elif child.tag.endswith("FreeText"):
                    text = child.text or ""
            if name:
                found[name] = text or ""
    return found


def assignment_import(*, batch: CrowdBatch, task: CrowdTask, item: dict, report: SyncReport) -> None:
    """One MTurk assignment, in its own transaction: a crash leaves earlier ones imported, and a
    re-run finds them (unique provider + assignment id) and only refreshes their status."""
    worker_id, assignment_id = item["WorkerId"], item["AssignmentId"]
    if not MTURK_WORKER_ID.fullmatch(worker_id) or not MTURK_ENTITY_ID.fullmatch(assignment_id):
        raise UserError(f"MTurk returned malformed ids {worker_id!r} / {assignment_id!r}")
    with transaction.atomic():
        worker, _ = Annotator.objects.get_or_create(provider=AnnotatorProvider.MTURK, external_id=worker_id)
        ca = CrowdAssignment.objects.select_for_update().filter(provider="mturk", external_id=assignment_id).first()
        if ca is None:
            try:
                with transaction.atomic():
                    ca = CrowdAssignment.objects.create(
                        provider="mturk", external_id=assignment_id, batch=batch, task=task, worker=worker
                    )
            except IntegrityError:
                ca = CrowdAssignment.objects.select_for_update().get(provider="mturk", external_id=assignment_id)
        if ca.task_id != task.pk or ca.worker_id != worker.pk:
            report.submitted_without_scores.append(assignment_id)
            return
        first = ca.imported_at is None
        ca.external_status = item["AssignmentStatus"]
        ca.status = _STATUS.get(item["AssignmentStatus"], ca.status)
        ca.submitted_at = item.get("SubmitTime") or ca.submitted_at
        ca.auto_approval_at = item.get("AutoApprovalTime") or ca.auto_approval_at
        ca.answer = parse_answer(item.get("Answer", ""))
        if first:
            ca.imported_at = timezone.now()
        ours = ca.assignment or Assignment.objects.filter(question_id=task.question_id, annotator=worker).first()
        if ours is not None and ca.assignment_id is None and not hasattr(ours, "crowd"):
            ca.assignment = ours
        ca.save()
        if first:
            report.imported += 1
        else:
            report.already_imported += 1
        if ours is None or ours.status != AssignmentStatus.SUBMITTED:
            if ours is not None and answers_recover(crowd_assignment=ca, assignment=ours):
                report.recovered += 1
            else:
                report.submitted_without_scores.append(assignment_id)


def answers_recover(*, crowd_assignment: CrowdAssignment, assignment: Assignment) -> bool:
    """Scores MTurk has but we do not (our save failed after the worker's form went out): store
    them from the answer MTurk kept (mturk_entry.answers_encode). Returns True when scores were
    stored."""
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
            counted=False,  # the batch's confirmations decide (crowd.services.confirmation)
        )
    except UserError:
        return False
    return result.created
