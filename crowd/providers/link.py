"""The link provider: any platform that sends workers to a URL with their id and takes a
completion code back. One signed URL per batch (made here, and by Prolific for its study); the
platform's approvals come back as a CSV (crowd.services)."""

import re
import secrets
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.core import signing
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdAssignmentStatus, CrowdBatch, CrowdProvider, CrowdTaskStatus

from .base import Provider, entry_settings_check, pending_tasks_open, setting_int

_SALT = "wellchosen.crowd.link"
WORKER_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")  # whole values: fullmatch
# How long a link worker's work may wait for the researcher's approvals file before it gives its
# places back (setting confirm_within_hours): work nobody approved by then is discarded, so ids
# made up by whoever knows the link hold units for no longer than this.
DEFAULT_CONFIRM_WITHIN_HOURS = 72


class LinkProvider(Provider):
    name = CrowdProvider.LINK
    enters_by_link = True
    shows_link = True

    def fee(self, *, batch: CrowdBatch) -> Decimal:
        return Decimal(str((batch.settings or {}).get("fee_rate", "0")))

    def confirmed(self) -> Q:
        # No platform answers for a link's workers: the researcher's approvals file does
        # (crowd.services.review.link_approvals_import).
        return Q(status=CrowdAssignmentStatus.APPROVED)

    def settings_check(self, *, batch: CrowdBatch) -> None:
        entry_settings_check(batch=batch)
        self.confirm_within_seconds(batch=batch)

    def confirm_within_seconds(self, *, batch: CrowdBatch) -> int | None:
        # No platform to ask: the researcher's approvals file is the confirmation, and it must come
        # within the batch's window (a year at most).
        hours = setting_int(batch=batch, name="confirm_within_hours", default=DEFAULT_CONFIRM_WITHIN_HOURS, high=8760)
        return hours * 3600

    def batch_warnings(self, *, batch: CrowdBatch) -> list[str]:
        # The researcher's file is the only confirmation: say a day ahead that work will go.
        soon = timezone.now() - timedelta(seconds=self.confirm_within_seconds(batch=batch)) + timedelta(hours=24)
        due = CrowdAssignment.objects.filter(
            batch=batch, status=CrowdAssignmentStatus.SUBMITTED, created_at__lt=soon
        ).count()
        if not due:
            return []
        return [
            f"{due} submission(s) nobody approved or rejected yet will be discarded within 24 hours "
            "(setting confirm_within_hours): upload the platform's approvals file now"
        ]

    def unit_submitted(self, *, crowd_assignment: CrowdAssignment) -> None:
        # No platform reports the submission: saving the scores here is submitting.
        CrowdAssignment.objects.filter(pk=crowd_assignment.pk, status=CrowdAssignmentStatus.ACCEPTED).update(
            status=CrowdAssignmentStatus.SUBMITTED, submitted_at=timezone.now()
        )

    def publish(self, *, batch: CrowdBatch) -> None:
        if not batch.completion_code:
            batch.completion_code = secrets.token_hex(4).upper()
            batch.save(update_fields=["completion_code"])
        pending_tasks_open(batch=batch)

    def expire(self, *, batch: CrowdBatch) -> None:
        batch.tasks.filter(status=CrowdTaskStatus.PUBLISHED).update(
            status=CrowdTaskStatus.EXPIRED, expires_at=timezone.now()
        )


def link_token(*, batch: CrowdBatch) -> str:
    return signing.dumps({"b": batch.pk, "t": batch.token}, salt=_SALT)


def link_token_read(*, token: str) -> dict:
    """What a batch's link token carries (its batch's id and token), or UserError."""
    max_age = settings.WELLCHOSEN_CROWD_LINK_MAX_AGE_DAYS * 86400
    try:
        return signing.loads(token, salt=_SALT, max_age=max_age)
    except signing.BadSignature as exc:
        raise UserError("this link is not valid (or has expired)") from exc


def link_url(*, batch: CrowdBatch) -> str:
    """The URL to give the platform; it appends (or substitutes) the worker's id as ?worker=..."""
    base = settings.WELLCHOSEN_PUBLIC_URL.rstrip("/")
    return f"{base}{reverse('crowd-link', args=[link_token(batch=batch)])}"
