"""A worker arrives at a task of a batch, from any platform: their crowd assignment (unique per
provider and the platform's assignment id) and our unit leased to them. MTurk's ExternalQuestion
page (mturk_entry) and the signed links (crowd.services.work) both come in here."""

from django.db import IntegrityError, transaction

from annotation.models import Annotator, AssignmentStatus
from annotation.services.assignment import unit_lease_question
from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdAssignmentStatus, CrowdBatch, CrowdTask


def crowd_assignment_enter(
    *,
    provider: str,
    external_id: str,
    batch: CrowdBatch,
    task: CrowdTask,
    worker: Annotator,
    lease_seconds: int | None,
    submit_to: str = "",
) -> CrowdAssignment:
    """The worker's crowd assignment for the task, made once, and the task's unit leased to them
    for ``lease_seconds`` (the platform's own deadline). A submitted one is returned as it is."""
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
            annotator=worker, question_id=task.question_id, lease_seconds=lease_seconds, provider_ref=external_id
        )
        # A worker who returned the HIT and took it again comes with a new assignment id.
        CrowdAssignment.objects.filter(assignment=assignment).exclude(pk=ca.pk).update(
            assignment=None, status=CrowdAssignmentStatus.RETURNED
        )
        ca.assignment = assignment
        ca.save(update_fields=["assignment"])
    return ca
