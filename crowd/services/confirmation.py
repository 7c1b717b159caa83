"""Crowd work counts only once its platform confirms it: a worker's scores are saved as soon as
they hand them in, but are no evidence (filtering, adaptive stopping, agreement) until the
provider says the assignment is real (provider.confirmed()). Work the platform still does not know
after its deadline (provider.confirm_within_seconds) is discarded and its unit freed, so invented
workers and assignment ids cannot add scores nor keep real workers out for long."""

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus
from annotation.services.assignment import leases_reclaim
from annotation.services.submission import unit_discard, unit_scores_count
from crowd.models import CrowdAssignment, CrowdAssignmentStatus, CrowdBatch
from crowd.providers.base import Provider, SyncReport
from crowd.providers.registry import provider_for

logger = logging.getLogger(__name__)


def crowd_scores_reconcile(
    *, batch: CrowdBatch, crowd_assignments=None, provider: Provider | None = None
) -> tuple[int, int]:
    """Scores of the batch's confirmed assignments count, the others' do not (``crowd_assignments``:
    only these). Set-based; returns (scores that began counting, scores that stopped)."""
    confirmed = provider_for(batch=batch, provider=provider).confirmed()
    mine = CrowdAssignment.objects.filter(batch=batch, assignment__isnull=False)
    if crowd_assignments is not None:
        mine = mine.filter(pk__in=crowd_assignments)
    with transaction.atomic():
        began = unit_scores_count(assignments=Assignment.objects.filter(crowd__in=mine.filter(confirmed)), counted=True)
        stopped = unit_scores_count(
            assignments=Assignment.objects.filter(crowd__in=mine.exclude(confirmed)), counted=False
        )
    return began, stopped


def crowd_unconfirmed_discard(*, batch: CrowdBatch, provider: Provider | None = None, now=None) -> list[str]:
    """Discard work saved here that the platform has not confirmed by its deadline: the scores are
    deleted and the unit freed. Returns the discarded assignments' ids on the platform."""
    platform = provider_for(batch=batch, provider=provider)
    seconds = platform.confirm_within_seconds(batch=batch)
    if seconds is None:
        return []
    deadline = (now or timezone.now()) - timedelta(seconds=seconds)
    # Work the platform never saw, or saw given back (a participant who returned the study or ran
    # out of time): either way it will not be confirmed. A rejection stays on record.
    overdue = (
        CrowdAssignment.objects.filter(batch=batch, created_at__lt=deadline)
        .filter(Q(imported_at__isnull=True) | Q(status=CrowdAssignmentStatus.RETURNED))
        .exclude(status__in=[CrowdAssignmentStatus.REJECTED, CrowdAssignmentStatus.DISCARDED])
        .filter(assignment__status=AssignmentStatus.SUBMITTED)
        .exclude(platform.confirmed())
        .select_related("worker")
    )
    discarded = []
    for ca in overdue:
        reason = (
            f"{ca.provider} assignment {ca.external_id} of worker {ca.worker.external_id} (batch {batch.name}) "
            f"is unknown to the platform (or was given back) {seconds} s after it was taken"
        )
        with transaction.atomic():
            unit_discard(assignment_id=ca.assignment_id, reason=reason)
            CrowdAssignment.objects.filter(pk=ca.pk).update(
                status=CrowdAssignmentStatus.DISCARDED, external_status="not on the platform"
            )
        discarded.append(ca.external_id)
    return discarded


def crowd_confirmations_apply(*, batch: CrowdBatch, report: SyncReport, provider: Provider | None = None) -> None:
    """After a sync: what the platform confirmed counts, what it rejected stops counting, and what
    it never saw past its deadline is discarded (recorded in ``report``)."""
    report.scores_confirmed, report.scores_withdrawn = crowd_scores_reconcile(batch=batch, provider=provider)
    report.discarded = crowd_unconfirmed_discard(batch=batch, provider=provider)
    leases_reclaim()  # leases that ran out give their places back now, not at the next request
    if report.discarded:
        logger.warning("batch %s: %d unconfirmed assignment(s) discarded", batch.name, len(report.discarded))
