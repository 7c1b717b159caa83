"""What MTurk's ExternalQuestion page needs: the HIT a worker previews or accepted, the
(worker, assignment, HIT) triple checked and the unit leased, the turkSubmitTo address the
page hands the assignment in to, and the scores as posted with it (sync can recover them)."""

import json
from urllib.parse import urlsplit

from django.conf import settings

from annotation.models import Annotator
from annotation.services.submission import Answer
from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdBatchStatus, CrowdProvider, CrowdTask, CrowdTaskStatus

from .entry import crowd_assignment_enter
from .mturk import MTurkProvider
from .mturk_client import MTURK_ENTITY_ID, MTURK_WORKER_ID

PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"


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
    if not MTURK_ENTITY_ID.fullmatch(hit_id or ""):  # before the query: PostgreSQL refuses a NUL in it
        raise UserError("hitId is missing or malformed")
    task = (
        CrowdTask.objects.select_related("batch", "question")
        .filter(provider=CrowdProvider.MTURK, external_id=hit_id)
        .first()
    )
    if task is None or task.status == CrowdTaskStatus.PENDING:
        raise UserError("this HIT is not one of ours, or is not published")
    return task


def mturk_enter(*, hit_id: str, assignment_id: str, worker_id: str, submit_to: str) -> CrowdAssignment:
    """A worker accepted a HIT: check the (worker, assignment, HIT) triple and lease them the unit
    for the HIT's own assignment duration."""
    submit_to_check(url=submit_to)
    for name, value, form in (
        ("assignmentId", assignment_id, MTURK_ENTITY_ID),
        ("workerId", worker_id, MTURK_WORKER_ID),
        ("hitId", hit_id, MTURK_ENTITY_ID),
    ):
        if not form.fullmatch(value or ""):
            raise UserError(f"{name} is missing or malformed")
    task = task_for_hit(hit_id=hit_id)
    if task.status != CrowdTaskStatus.PUBLISHED or task.batch.status != CrowdBatchStatus.PUBLISHED:
        if not CrowdAssignment.objects.filter(provider=CrowdProvider.MTURK, external_id=assignment_id).exists():
            raise UserError("this HIT has expired")
    worker, _ = Annotator.objects.get_or_create(provider=CrowdProvider.MTURK, external_id=worker_id)
    return crowd_assignment_enter(
        provider=CrowdProvider.MTURK,
        external_id=assignment_id,
        batch=task.batch,
        task=task,
        worker=worker,
        lease_seconds=MTurkProvider.for_batch(batch=task.batch).lease_seconds(batch=task.batch),
        submit_to=submit_to.rstrip("/"),
    )


def answers_encode(answers: dict[str, Answer]) -> str:
    """The scores as posted to MTurk with the assignment: sync can recover them from there."""
    return json.dumps({key: [a.value, a.labels] for key, a in sorted(answers.items())}, separators=(",", ":"))
