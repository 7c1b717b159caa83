"""Reviewing crowd work: approve or reject a submission, a link platform's approvals CSV, bonuses
(paid once), and messages to a batch's workers. The platform's part is the provider's."""

from decimal import Decimal
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from core.errors import ImportFileError, UserError
from core.lines import csv_rows, encoding_check, text_field_check
from crowd.models import CrowdAssignment, CrowdAssignmentStatus, CrowdBatch, CrowdBonus, CrowdBonusStatus
from crowd.providers.base import Provider
from crowd.providers.link import WORKER_ID
from crowd.providers.mturk_client import FEEDBACK_MAX, request_token
from crowd.providers.registry import provider_for
from crowd.services.confirmation import crowd_scores_reconcile


def crowd_assignment_review(
    *,
    crowd_assignment: CrowdAssignment,
    approve: bool,
    feedback: str = "",
    override_rejection: bool = False,
    provider: Provider | None = None,
) -> CrowdAssignment:
    """Approve or reject a submission (status guard: reviewing twice changes nothing)."""
    if len(feedback) > FEEDBACK_MAX:
        raise UserError(f"feedback is {len(feedback)} characters; the limit is {FEEDBACK_MAX}")
    if "\x00" in feedback:  # PostgreSQL cannot store it, and the platform would have it already
        raise UserError("feedback must not contain a NUL character")
    wanted = CrowdAssignmentStatus.APPROVED if approve else CrowdAssignmentStatus.REJECTED
    if crowd_assignment.status == wanted:
        return crowd_assignment
    if approve and crowd_assignment.status == CrowdAssignmentStatus.REJECTED and not override_rejection:
        raise UserError("this submission was rejected: approving it needs 'override rejection'")
    if crowd_assignment.status not in (
        CrowdAssignmentStatus.SUBMITTED,
        CrowdAssignmentStatus.REJECTED,
    ):
        raise UserError(f"a submission that is {crowd_assignment.status} cannot be reviewed")
    if not approve and not feedback.strip():
        raise UserError("a rejection needs feedback that tells the worker why")
    platform = provider_for(batch=crowd_assignment.batch, provider=provider)
    if approve:
        platform.approve(crowd_assignment=crowd_assignment, feedback=feedback, override_rejection=override_rejection)
    else:
        platform.reject(crowd_assignment=crowd_assignment, feedback=feedback)
    reviewed = platform.reviewed_with(crowd_assignment=crowd_assignment)
    reviewed_ids = list(reviewed.values_list("pk", flat=True))
    reviewed.update(status=wanted, feedback=feedback, reviewed_at=timezone.now())
    crowd_scores_reconcile(batch=crowd_assignment.batch, crowd_assignments=reviewed_ids, provider=platform)
    crowd_assignment.refresh_from_db()
    return crowd_assignment


_ID_COLUMNS = ("worker_id", "participant_id", "participant id", "workerid", "worker id")
_STATUS = {
    "approved": CrowdAssignmentStatus.APPROVED,
    "approve": CrowdAssignmentStatus.APPROVED,
    "rejected": CrowdAssignmentStatus.REJECTED,
    "reject": CrowdAssignmentStatus.REJECTED,
}


def link_approvals_import(*, batch: CrowdBatch, path: Path | str, encoding: str = "utf-8") -> dict:
    """The platform's approvals CSV (worker id and APPROVED/REJECTED per row, feedback optional):
    marks each worker's submissions of the batch (``discarded``: those already discarded). One
    transaction; errors name file, line, field; every row has the header's fields, and a worker
    appears once."""
    path = Path(path)
    encoding_check(encoding=encoding)
    rows = csv_rows(path, encoding=encoding)
    header_line, header = next(rows, (1, []))
    header = [name.strip() for name in header]
    columns = _approvals_columns(header, path=path, line=header_line)
    id_col, status_col, feedback_col = (header[i] if i is not None else None for i in columns)
    counts = {"approved": 0, "rejected": 0, "unchanged": 0, "discarded": 0}
    seen: dict[str, tuple[int, CrowdAssignmentStatus]] = {}
    with transaction.atomic():
        for line, row in rows:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise ImportFileError(
                    path,
                    line,
                    None,
                    f"expected {len(header)} comma-separated fields as in the header, found {len(row)}",
                )
            for name, cell in zip(header, row, strict=True):
                text_field_check(cell, path=path, line=line, field=name)
            worker_id, status_text, feedback = (row[i] if i is not None else "" for i in columns)
            worker_id = worker_id.strip()
            if not WORKER_ID.fullmatch(worker_id):
                raise ImportFileError(path, line, id_col, f"worker id {worker_id!r} is empty or malformed")
            status = _STATUS.get(status_text.strip().lower())
            if status is None:
                raise ImportFileError(path, line, status_col, f"status {status_text!r} is not APPROVED/REJECTED")
            if worker_id in seen:
                earlier_line, earlier = seen[worker_id]
                if earlier != status:
                    raise ImportFileError(
                        path,
                        line,
                        id_col,
                        f"worker {worker_id} is {earlier.label} on line {earlier_line}, {status.label} here",
                    )
                continue
            seen[worker_id] = (line, status)
            if len(feedback) > FEEDBACK_MAX:
                raise ImportFileError(
                    path, line, feedback_col, f"is {len(feedback)} characters; the limit is {FEEDBACK_MAX}"
                )
            submissions = CrowdAssignment.objects.filter(
                batch=batch, worker__provider=batch.provider, worker__external_id=worker_id
            ).exclude(status__in=[CrowdAssignmentStatus.ACCEPTED, CrowdAssignmentStatus.RETURNED])
            if not submissions.exists():
                raise ImportFileError(path, line, id_col, f"worker {worker_id} has no submission in batch {batch.name}")
            # Work discarded when the batch's confirm_within_hours passed has no scores left to
            # approve: counted apart, so that a late file still approves the rest.
            discarded = submissions.filter(status=CrowdAssignmentStatus.DISCARDED).count()
            counts["discarded"] += discarded
            submissions = submissions.exclude(status=CrowdAssignmentStatus.DISCARDED)
            if not submissions.exists():
                continue
            changed = submissions.exclude(status=status).update(
                status=status, reviewed_at=timezone.now(), feedback=feedback
            )
            counts[status.value if changed else "unchanged"] += changed or 1
        if not seen:
            raise UserError(f"{path.name}: the header is not followed by any worker; nothing was changed")
        counts["scores_confirmed"], counts["scores_withdrawn"] = crowd_scores_reconcile(batch=batch)
    return counts


def _approvals_columns(header: list[str], *, path: Path, line: int) -> tuple[int, int, int | None]:
    """Positions of the worker id, status and (optional) feedback columns."""
    for name in header:
        text_field_check(name, path=path, line=line, field="header")
    names = [name.strip().lower() for name in header]
    repeated = sorted({name for name in names if name and names.count(name) > 1})
    if repeated:
        raise ImportFileError(path, line, "header", f"column(s) {', '.join(repeated)} appear more than once")
    id_index = next((names.index(c) for c in _ID_COLUMNS if c in names), None)
    if id_index is None:
        raise ImportFileError(path, line, "header", f"no worker id column (one of {', '.join(_ID_COLUMNS)})")
    if "status" not in names:
        raise ImportFileError(path, line, "header", "no status column")
    return id_index, names.index("status"), names.index("feedback") if "feedback" in names else None


def crowd_bonus_send(
    *,
    crowd_assignment: CrowdAssignment,
    amount: Decimal,
    reason: str,
    purpose: str = "bonus",
    provider: Provider | None = None,
) -> CrowdBonus:
    """Pay a bonus once per assignment and purpose: the row (and its token) is written before the
    call, so a retry or a double click reuses it and the provider pays once."""
    if crowd_assignment.status not in (CrowdAssignmentStatus.SUBMITTED, CrowdAssignmentStatus.APPROVED):
        raise UserError(f"a bonus is for submitted or approved work, not for a {crowd_assignment.status} assignment")
    amount = Decimal(amount).quantize(Decimal("0.01"))
    if amount <= 0:
        raise UserError("a bonus must be more than $0.00")
    if not reason.strip():
        raise UserError("a bonus needs a reason (the worker sees it)")
    with transaction.atomic():
        bonus, created = CrowdBonus.objects.get_or_create(
            crowd_assignment=crowd_assignment,
            purpose=purpose,
            defaults={
                "amount": amount,
                "reason": reason[:1024],
                "token": request_token("bonus", crowd_assignment.provider, crowd_assignment.external_id, purpose),
            },
        )
    if not created and bonus.amount != amount:
        raise UserError(f"a {purpose} bonus of ${bonus.amount} was already recorded for this assignment")
    if bonus.status == CrowdBonusStatus.PAID:
        return bonus
    provider_for(batch=crowd_assignment.batch, provider=provider).bonus(bonus=bonus)
    CrowdBonus.objects.filter(pk=bonus.pk).update(status=CrowdBonusStatus.PAID, paid_at=timezone.now())
    bonus.refresh_from_db()
    return bonus


def crowd_workers_notify(*, batch: CrowdBatch, subject: str, message: str, provider: Provider | None = None) -> dict:
    """Message every worker who took part in the batch (MTurk NotifyWorkers, 100 ids per call)."""
    if not subject.strip() or len(subject) > 200:
        raise UserError("the subject must have 1 to 200 characters")
    if not message.strip() or len(message) > 4096:
        raise UserError("the message must have 1 to 4096 characters")
    workers = sorted(set(batch.assignments.values_list("worker__external_id", flat=True)))
    if not workers:
        raise UserError("nobody has worked on this batch yet")
    platform = provider_for(batch=batch, provider=provider)
    failed = platform.notify(batch=batch, worker_ids=workers, subject=subject, message=message)
    return {"workers": len(workers), "failed": failed}
