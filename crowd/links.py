"""Signed links (link and Prolific batches): the batch a link opens, a worker's progress through
it, and the platform's approvals CSV."""

import csv
import io
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from annotation.models import Annotator, AssignmentStatus
from core.errors import ImportFileError, UserError
from crowd.models import CrowdAssignment, CrowdAssignmentStatus, CrowdBatch
from crowd.providers.link import WORKER_ID, link_token_read
from crowd.providers.registry import provider_for


def link_batch(*, token: str) -> CrowdBatch:
    """The batch of a signed link, if its provider lets workers in by one."""
    data = link_token_read(token=token)
    batch = CrowdBatch.objects.select_related("dataset").filter(pk=data.get("b"), token=data.get("t")).first()
    if batch is None or not provider_for(batch=batch).enters_by_link:
        raise UserError("this link is not valid")
    return batch


def link_progress(*, batch: CrowdBatch, worker: Annotator) -> dict:
    """Where a link worker is: the unit they are on and how many they will score at most."""
    total = min(provider_for(batch=batch).units_per_worker(batch=batch), batch.tasks.count())
    return {"unit": min(total, link_done(batch=batch, worker=worker) + 1), "of": total}


def link_done(*, batch: CrowdBatch, worker: Annotator) -> int:
    return CrowdAssignment.objects.filter(
        batch=batch, worker=worker, assignment__status=AssignmentStatus.SUBMITTED
    ).count()


_ID_COLUMNS = ("worker_id", "participant_id", "participant id", "workerid", "worker id")
_STATUS = {
    "approved": CrowdAssignmentStatus.APPROVED,
    "approve": CrowdAssignmentStatus.APPROVED,
    "rejected": CrowdAssignmentStatus.REJECTED,
    "reject": CrowdAssignmentStatus.REJECTED,
}


def link_approvals_import(*, batch: CrowdBatch, path: Path | str, encoding: str = "utf-8") -> dict:
    """The platform's approvals CSV (worker id and APPROVED/REJECTED per row, feedback optional):
    marks each worker's submissions of the batch. One transaction; errors name file, line, field."""
    path = Path(path)
    try:
        text = path.read_bytes().decode(encoding).lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        raise ImportFileError(path, None, None, f"not {encoding} text ({exc.reason})") from exc
    reader = csv.DictReader(io.StringIO(text, newline=""))
    headers = {(h or "").strip().lower(): h for h in reader.fieldnames or []}
    id_col = next((headers[c] for c in _ID_COLUMNS if c in headers), None)
    status_col = headers.get("status")
    if id_col is None:
        raise ImportFileError(path, 1, "header", f"no worker id column (one of {', '.join(_ID_COLUMNS)})")
    if status_col is None:
        raise ImportFileError(path, 1, "header", "no status column")
    feedback_col = headers.get("feedback")
    counts = {"approved": 0, "rejected": 0, "unchanged": 0}
    with transaction.atomic():
        for row in reader:
            line = reader.line_num
            worker_id = (row.get(id_col) or "").strip()
            if not WORKER_ID.match(worker_id):
                raise ImportFileError(path, line, id_col, f"worker id {worker_id!r} is empty or malformed")
            status = _STATUS.get((row.get(status_col) or "").strip().lower())
            if status is None:
                raise ImportFileError(
                    path, line, status_col, f"status {row.get(status_col)!r} is not APPROVED/REJECTED"
                )
            submissions = CrowdAssignment.objects.filter(
                batch=batch, worker__provider=batch.provider, worker__external_id=worker_id
            ).exclude(status__in=[CrowdAssignmentStatus.ACCEPTED, CrowdAssignmentStatus.RETURNED])
            if not submissions.exists():
                raise ImportFileError(path, line, id_col, f"worker {worker_id} has no submission in batch {batch.name}")
            changed = submissions.exclude(status=status).update(
                status=status,
                reviewed_at=timezone.now(),
                feedback=((row.get(feedback_col) or "") if feedback_col else "")[:1024],
            )
            counts[status.value if changed else "unchanged"] += changed or 1
    return counts
