"""Blocking crowd workers: here (annotation's annotator_block) and on their batch's platform, and
on every platform they worked on when the dashboard blocks them everywhere (the platform block
this app registers with annotation.services.annotators_admin)."""

from annotation.models import Annotator
from annotation.services.annotators_admin import BlockReport, annotator_block, annotator_unblock
from core.errors import UserError
from crowd.models import CrowdBatch
from crowd.providers.base import Blocking, Provider
from crowd.providers.registry import provider_for
from crowd.selectors import crowd_batches_of_worker


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


def crowd_worker_platforms_block(
    *, worker: Annotator, reason: str, block: bool, report: BlockReport, provider: Provider | None = None
) -> None:
    """Block (or unblock) an MTurk or Prolific worker on the platform of every batch they worked in
    (the dashboard's block button; annotation.services.annotators_admin blocks them here first).
    A platform that refuses is reported, not raised, so one bad batch does not hide the others."""
    for batch in crowd_batches_of_worker(worker=worker):
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
