"""Crowd batches: create and change them, publish, sync (on demand and periodically), expire and
dispose. Each service keeps our rows right and asks the batch's provider for the platform's part."""

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Dataset, QuestionWork
from annotation.services.assignment import annotation_open
from core.errors import UserError
from core.models import Job
from core.services.jobs import job_create
from crowd.job_params import CrowdSyncParams
from crowd.models import CrowdBatch, CrowdBatchStatus, CrowdProvider, CrowdTask, CrowdTaskStatus
from crowd.providers.base import Provider, SyncReport
from crowd.providers.registry import provider_for
from crowd.selectors import crowd_sync_in_flight
from crowd.services.confirmation import crowd_confirmations_apply

# A batch's cap on units: no dataset comes near it, and it fits the database's integer.
MAX_UNITS_CAP = 1_000_000


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
    """The rules every batch keeps, made or changed: a known provider, a cap on units in range, a
    production switch only where the platform has a sandbox, settings the platform takes, a name
    unique in its dataset."""
    if batch.provider not in CrowdProvider.values:
        raise UserError(f"unknown provider {batch.provider!r} (one of {', '.join(CrowdProvider.values)})")
    if batch.max_units is not None and (
        isinstance(batch.max_units, bool)
        or not isinstance(batch.max_units, int)
        or not 1 <= batch.max_units <= MAX_UNITS_CAP
    ):
        raise UserError(f"max_units must be a whole number from 1 to {MAX_UNITS_CAP}, or none for no cap")
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
    crowd_confirmations_apply(batch=batch, report=report, provider=provider)
    CrowdBatch.objects.filter(pk=batch.pk).update(synced_at=timezone.now())
    return report


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
            started.append(
                job_create(
                    params=CrowdSyncParams(batch_id=batch.pk, periodic=True), trigger="automatically, the periodic sync"
                )
            )
    return started


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
