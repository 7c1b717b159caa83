"""Crowd batches: create, publish, sync, review, pay, block, expire. Provider-neutral: each
service keeps our rows right and asks the batch's provider to do the platform's part."""

from datetime import timedelta
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from annotation.models import Annotator, AssignmentStatus, Dataset, QuestionWork
from annotation.services.annotators_admin import BlockReport, annotator_block, annotator_unblock
from annotation.services.assignment import annotation_open
from core.errors import UserError
from core.models import Job, JobStatus
from core.services.jobs import job_create
from crowd.job_params import CrowdSyncParams
from crowd.models import (
    CrowdAssignment,
    CrowdAssignmentStatus,
    CrowdBatch,
    CrowdBatchStatus,
    CrowdBonus,
    CrowdBonusStatus,
    CrowdProvider,
    CrowdTask,
    CrowdTaskStatus,
)
from crowd.providers.base import Blocking, Provider, SyncReport
from crowd.providers.mturk_client import FEEDBACK_MAX, request_token
from crowd.providers.registry import PROVIDERS, provider_for

# A sync job pending or running for longer than this without a sign of life (a lost message, a
# dead worker) no longer holds back the periodic sync of its batch.
SYNC_IN_FLIGHT_FOR = timedelta(hours=1)


def crowd_batch_create(
    *,
    dataset: Dataset,
    provider: str,
    name: str,
    settings: dict | None = None,
    max_units: int | None = None,
    production: bool = False,
) -> CrowdBatch:
    """A draft batch, its settings checked now rather than at publish time."""
    batch = CrowdBatch(
        dataset=dataset,
        provider=provider,
        name=name,
        settings=settings or {},
        max_units=max_units,
        production=production,
    )
    return _batch_save(batch)


def crowd_batch_update(
    *,
    batch: CrowdBatch,
    dataset: Dataset,
    provider: str,
    name: str,
    settings: dict | None = None,
    max_units: int | None = None,
    production: bool = False,
) -> CrowdBatch:
    """Change a batch under the rules it was made with; once published, its dataset, provider and
    production switch (where the money goes) stay as they are."""
    if batch.status != CrowdBatchStatus.DRAFT and (dataset.pk, provider, production) != (
        batch.dataset_id,
        batch.provider,
        batch.production,
    ):
        raise UserError(f"a batch that is {batch.status} keeps its dataset, provider and production switch")
    batch.dataset, batch.provider, batch.name = dataset, provider, name
    batch.settings, batch.max_units, batch.production = settings or {}, max_units, production
    return _batch_save(batch)


def _batch_save(batch: CrowdBatch) -> CrowdBatch:
    if batch.provider not in CrowdProvider.values:
        raise UserError(f"unknown provider {batch.provider!r} (one of {', '.join(CrowdProvider.values)})")
    platform = provider_for(batch=batch)
    if batch.production and not platform.has_sandbox:
        raise UserError("only MTurk batches have a sandbox/production switch")
    platform.settings_check(batch=batch)  # refuse bad settings now, not at publish time
    try:
        with transaction.atomic():
            batch.save()
    except IntegrityError as exc:
        raise UserError(f"dataset {batch.dataset.name} already has a crowd batch named {batch.name!r}") from exc
    return batch


def crowd_batch_publish(
    *, batch: CrowdBatch, confirm_production: bool = False, provider: Provider | None = None
) -> int:
    """Make one task per open unit (up to max_units) and put the pending ones on the provider.
    Idempotent: re-running after a crash publishes only what is still pending. Returns the number
    of published tasks. ``provider``: the batch's, made by the caller (by default the registry's)."""
    if batch.production and not confirm_production:
        raise UserError("this batch spends real money: confirm publishing to production")
    if batch.status not in (CrowdBatchStatus.DRAFT, CrowdBatchStatus.PUBLISHED):
        raise UserError(f"a batch that is {batch.status} cannot be published")
    annotation_open(dataset=batch.dataset)
    k = batch.dataset.annotators_per_item
    with transaction.atomic():
        CrowdBatch.objects.select_for_update().filter(pk=batch.pk).first()
        have = batch.tasks.count()
        room = None if batch.max_units is None else max(0, batch.max_units - have)
        # Only units that still need annotators, and only as many assignments as they still need.
        units = (
            QuestionWork.objects.filter(dataset=batch.dataset, is_open=True, slots_taken__lt=F("slots_needed"))
            .exclude(question__crowd_tasks__batch=batch)
            .order_by("question_id")
            .values_list("question_id", "slots_needed", "slots_taken")
        )
        if room is not None:
            units = units[:room]
        CrowdTask.objects.bulk_create(
            [
                CrowdTask(batch=batch, question_id=q, provider=batch.provider, max_assignments=min(k, needed - taken))
                for q, needed, taken in units
            ],
            ignore_conflicts=True,
        )
    provider_for(batch=batch, provider=provider).publish(batch=batch)
    CrowdBatch.objects.filter(pk=batch.pk).update(
        status=CrowdBatchStatus.PUBLISHED, published_at=batch.published_at or timezone.now()
    )
    batch.refresh_from_db()
    return batch.tasks.filter(status=CrowdTaskStatus.PUBLISHED).count()


def crowd_batch_sync(*, batch: CrowdBatch, provider: Provider | None = None) -> SyncReport:
    report = provider_for(batch=batch, provider=provider).sync(batch=batch)
    CrowdBatch.objects.filter(pk=batch.pk).update(synced_at=timezone.now())
    return report


def crowd_sync_in_flight(*, batch: CrowdBatch, now=None) -> bool:
    """Whether a sync job of the batch is queued or running (and showed a sign of life lately)."""
    since = (now or timezone.now()) - SYNC_IN_FLIGHT_FOR
    jobs = Job.objects.filter(
        kind=CrowdSyncParams.kind, status__in=[JobStatus.PENDING, JobStatus.RUNNING], params__batch_id=batch.pk
    )
    return jobs.filter(Q(heartbeat_at__gte=since) | Q(heartbeat_at__isnull=True, created_at__gte=since)).exists()


def crowd_sync_due(*, now=None) -> list[Job]:
    """Start a sync job for every published batch that has none queued or running (the periodic
    sync: no pile-up when a sync takes longer than the interval). Returns the jobs started."""
    started = []
    for batch_id in CrowdBatch.objects.filter(status=CrowdBatchStatus.PUBLISHED).values_list("pk", flat=True):
        with transaction.atomic():
            # The lock makes two concurrent runs (a second beat) start one job, not two.
            batch = (
                CrowdBatch.objects.select_for_update().filter(pk=batch_id, status=CrowdBatchStatus.PUBLISHED).first()
            )
            if batch is None or crowd_sync_in_flight(batch=batch, now=now):
                continue
            started.append(job_create(params=CrowdSyncParams(batch_id=batch.pk, periodic=True)))
    return started


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
    platform.reviewed_with(crowd_assignment=crowd_assignment).update(
        status=wanted, feedback=feedback, reviewed_at=timezone.now()
    )
    crowd_assignment.refresh_from_db()
    return crowd_assignment


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


def crowd_worker_block(
    *,
    worker: Annotator,
    reason: str,
    batch: CrowdBatch | None = None,
    exclude_scores: bool = False,
    provider: Provider | None = None,
) -> int:
    """Block on our side (open leases released; returns how many) and on the batch's platform."""
    released = annotator_block(annotator=worker, exclude_scores=exclude_scores)
    if batch is not None:
        provider_for(batch=batch, provider=provider).block(worker=worker, reason=reason, batch=batch)
    return released


def crowd_worker_unblock(
    *, worker: Annotator, reason: str, batch: CrowdBatch | None = None, provider: Provider | None = None
) -> None:
    annotator_unblock(annotator=worker)
    if batch is not None:
        provider_for(batch=batch, provider=provider).unblock(worker=worker, reason=reason, batch=batch)


def _crowd_batches_of(worker: Annotator):
    """The batches of the worker's platform they worked in, where they have an account there."""
    platform = PROVIDERS.get(worker.provider)
    if platform is None or platform.blocking is Blocking.HERE_ONLY:
        return CrowdBatch.objects.none()
    return CrowdBatch.objects.filter(assignments__worker=worker, provider=worker.provider).distinct().order_by("pk")


def crowd_worker_platforms_block(
    *, worker: Annotator, reason: str, block: bool, report: BlockReport, provider: Provider | None = None
) -> None:
    """Block (or unblock) an MTurk or Prolific worker on the platform of every batch they worked in
    (the dashboard's block button; annotation.services.annotators_admin blocks them here first).
    A platform that refuses is reported, not raised, so one bad batch does not hide the others."""
    for batch in _crowd_batches_of(worker):
        label = f"{batch.name} ({batch.provider})"
        try:
            platform = provider_for(batch=batch, provider=provider)
            if platform.blocking is not Blocking.ON_PLATFORM:
                report.by_hand.append(label)
                continue
            (platform.block if block else platform.unblock)(worker=worker, reason=reason, batch=batch)
        except UserError as exc:
            report.failed.append(f"{label}: {exc}")
        else:
            report.on_platform.append(label)


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


def crowd_batch_expire(*, batch: CrowdBatch, provider: Provider | None = None) -> None:
    if batch.status == CrowdBatchStatus.EXPIRED:
        return
    provider_for(batch=batch, provider=provider).expire(batch=batch)
    CrowdBatch.objects.filter(pk=batch.pk).update(status=CrowdBatchStatus.EXPIRED)
    batch.refresh_from_db()


def crowd_batch_dispose(*, batch: CrowdBatch, provider: Provider | None = None) -> int | None:
    """Delete the batch's finished tasks on its platform; returns how many, or None where the
    platform keeps no tasks to delete."""
    platform = provider_for(batch=batch, provider=provider)
    if not platform.disposes_tasks:
        return None
    return platform.dispose(batch=batch)


def crowd_review_suggestions(*, batch: CrowdBatch) -> list[dict]:
    """For every submission awaiting review: approve or reject, and feedback to send, from the
    quality-control measures (attention check of the unit, the worker's flags)."""
    from annotation.services.quality import annotators_quality

    flags = {q.annotator_id: q.flags for q in annotators_quality(dataset=batch.dataset)}
    suggestions = []
    pending = (
        CrowdAssignment.objects.filter(batch=batch, status=CrowdAssignmentStatus.SUBMITTED)
        .select_related("assignment", "worker")
        .order_by("pk")
    )
    for ca in pending:
        reasons = []
        ours = ca.assignment
        if ours is None or ours.status != AssignmentStatus.SUBMITTED:
            reasons.append("no scores were saved for this assignment")
        elif ours.check_passed is False:
            reasons.append("the attention check (an unrelated reply) was scored as fitting")
        reasons += flags.get(ca.worker_id, [])
        if reasons:
            feedback = "Thank you for your work. We could not accept it: " + "; ".join(reasons) + "."
            suggestions.append({"crowd_assignment": ca, "approve": False, "feedback": feedback[:FEEDBACK_MAX]})
        else:
            suggestions.append({"crowd_assignment": ca, "approve": True, "feedback": "Thank you!"})
    return suggestions


def crowd_batch_warnings(*, batch: CrowdBatch, now=None) -> list[str]:
    """Deadlines the researcher should not miss: auto-approval within a day, HITs near MTurk's
    120-day disposal, and the 10-assignment surcharge."""
    now = now or timezone.now()
    warnings = provider_for(batch=batch).batch_warnings(batch=batch)
    soon = CrowdAssignment.objects.filter(
        batch=batch,
        status=CrowdAssignmentStatus.SUBMITTED,
        auto_approval_at__isnull=False,
        auto_approval_at__lte=now + timedelta(hours=24),
    ).count()
    if soon:
        warnings.append(f"{soon} submission(s) will be approved automatically within 24 hours: review them now")
    old = batch.tasks.exclude(status=CrowdTaskStatus.DELETED).filter(published_at__lte=now - timedelta(days=110))
    if old.exists():
        warnings.append(
            f"{old.count()} HIT(s) are over 110 days old: MTurk disposes of HITs and their data at 120 days"
        )
    return warnings


def crowd_batch_status(*, batch: CrowdBatch) -> dict:
    tasks = dict(batch.tasks.order_by().values("status").annotate(n=Count("id")).values_list("status", "n"))
    assignments = dict(batch.assignments.order_by().values("status").annotate(n=Count("id")).values_list("status", "n"))
    return {
        "batch": batch.name,
        "provider": batch.provider,
        "status": batch.status,
        "tasks": tasks,
        "assignments": assignments,
        "bonuses_paid": str(
            CrowdBonus.objects.filter(crowd_assignment__batch=batch, status=CrowdBonusStatus.PAID).aggregate(
                s=Sum("amount")
            )["s"]
            or Decimal("0.00")
        ),
        "warnings": crowd_batch_warnings(batch=batch),
    }
