"""The link provider: any platform that sends workers to a URL with their id and takes a
completion code back. One signed URL per batch; the platform's approvals come back as a CSV."""

import csv
import io
import re
import secrets
from pathlib import Path

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.utils import timezone

from annotation.models import Annotator, AssignmentStatus, QuestionWork
from core.errors import ImportFileError, UserError
from crowd.models import (
    CrowdAssignment,
    CrowdAssignmentStatus,
    CrowdBatch,
    CrowdBatchStatus,
    CrowdProvider,
    CrowdTask,
    CrowdTaskStatus,
)

from .base import Provider

_SALT = "wellchosen.crowd.link"
WORKER_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
DEFAULT_UNITS_PER_WORKER = 10


class LinkProvider(Provider):
    name = CrowdProvider.LINK

    def publish(self, *, batch: CrowdBatch) -> None:
        if not batch.completion_code:
            batch.completion_code = secrets.token_hex(4).upper()
            batch.save(update_fields=["completion_code"])
        batch.tasks.filter(status=CrowdTaskStatus.PENDING).update(
            status=CrowdTaskStatus.PUBLISHED, published_at=timezone.now()
        )

    def expire(self, *, batch: CrowdBatch) -> None:
        batch.tasks.filter(status=CrowdTaskStatus.PUBLISHED).update(
            status=CrowdTaskStatus.EXPIRED, expires_at=timezone.now()
        )


def link_token(*, batch: CrowdBatch) -> str:
    return signing.dumps({"b": batch.pk, "t": batch.token}, salt=_SALT)


def link_url(*, batch: CrowdBatch) -> str:
    """The URL to give the platform; it appends (or substitutes) the worker's id as ?worker=..."""
    from django.urls import reverse

    base = settings.WELLCHOSEN_PUBLIC_URL.rstrip("/")
    return f"{base}{reverse('crowd-link', args=[link_token(batch=batch)])}"


def link_batch(*, token: str) -> CrowdBatch:
    max_age = settings.WELLCHOSEN_CROWD_LINK_MAX_AGE_DAYS * 86400
    try:
        data = signing.loads(token, salt=_SALT, max_age=max_age)
    except signing.BadSignature as exc:
        raise UserError("this link is not valid (or has expired)") from exc
    batch = CrowdBatch.objects.select_related("dataset").filter(pk=data.get("b"), token=data.get("t")).first()
    if batch is None or batch.provider not in (CrowdProvider.LINK, CrowdProvider.PROLIFIC):
        raise UserError("this link is not valid")
    return batch


def link_worker(*, batch: CrowdBatch, worker_id: str) -> Annotator:
    if not WORKER_ID.match(worker_id or ""):
        raise UserError("the link must carry your worker id (letters, digits, - _ . :, at most 64)")
    worker, _ = Annotator.objects.get_or_create(provider=batch.provider, external_id=worker_id)
    if worker.is_blocked:
        raise UserError("this worker is blocked")
    return worker


def link_quota(*, batch: CrowdBatch) -> int:
    """How many units one worker scores: units_per_worker (10); on Prolific, every unit."""
    # Prolific: K places, each participant scores every unit of the batch.
    default = batch.tasks.count() if batch.provider == CrowdProvider.PROLIFIC else DEFAULT_UNITS_PER_WORKER
    return int((batch.settings or {}).get("units_per_worker") or default)


def link_progress(*, batch: CrowdBatch, worker: Annotator) -> dict:
    """Where a link worker is: the unit they are on and how many they will score at most."""
    total = min(link_quota(batch=batch), batch.tasks.count())
    return {"unit": min(total, link_done(batch=batch, worker=worker) + 1), "of": total}


def link_next(*, batch: CrowdBatch, worker: Annotator) -> CrowdAssignment | None:
    """The worker's current unit of the batch, or the next one; None when they are done (their
    quota of units_per_worker, or nothing left)."""
    from .work import _enter

    if batch.status != CrowdBatchStatus.PUBLISHED:
        raise UserError("this study is closed")
    mine = CrowdAssignment.objects.filter(batch=batch, worker=worker).select_related("assignment")
    for ca in mine:
        if ca.assignment is not None and ca.assignment.status == AssignmentStatus.LEASED:
            if ca.assignment.leased_until >= timezone.now():
                return ca
    quota = link_quota(batch=batch)
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
            return _enter(
                provider=batch.provider,
                external_id=f"{batch.pk}:{task.pk}:{worker.external_id}",
                batch=batch,
                task=task,
                worker=worker,
            )
        except UserError:
            continue  # filled up meanwhile
    return None


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
