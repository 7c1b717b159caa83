"""The worker's side of crowd work: arriving by a batch's signed link (MTurk's ExternalQuestion is
crowd.providers.mturk_entry), getting the task's unit, and handing in scores (ours first, then,
where the platform has one, its form).

Crowd workers are Annotator rows of their provider with no Django user; they are identified by
the provider's parameters, checked against the published tasks, and the page they work on is
bound to their session by a signed token (crowd.selectors.unit_token).
"""

import ipaddress
from collections.abc import Mapping
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from annotation.models import Annotator, Assignment, AssignmentStatus, QuestionWork
from annotation.services.submission import Answer, SubmitResult, unit_submit
from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdBatch, CrowdBatchStatus, CrowdLinkEntry, CrowdTask, CrowdTaskStatus
from crowd.providers.entry import crowd_assignment_enter
from crowd.providers.link import WORKER_ID
from crowd.providers.registry import provider_for
from crowd.selectors import link_places_held
from crowd.services.confirmation import crowd_scores_reconcile

_ADDRESS_SALT = "wellchosen.crowd.address"


class EntryLimitError(UserError):
    """A per-address limit of a batch that workers enter by its link: come back later."""


def crowd_unit_submit(
    *, crowd_assignment: CrowdAssignment, answers: dict[str, Answer], duration_ms: int | None = None
) -> SubmitResult:
    """Save the worker's scores on our side first (exactly once); the page then posts to the provider.
    They count once the platform confirms the assignment (crowd.services.confirmation)."""
    if crowd_assignment.worker.is_blocked:
        raise UserError("this worker is blocked")
    result = unit_submit(
        assignment_id=crowd_assignment.assignment_id,
        annotator=crowd_assignment.worker,
        answers=answers,
        duration_ms=duration_ms,
        provider_ref=crowd_assignment.external_id,
        counted=False,
    )
    platform = provider_for(batch=crowd_assignment.batch)
    platform.unit_submitted(crowd_assignment=crowd_assignment)
    crowd_scores_reconcile(batch=crowd_assignment.batch, crowd_assignments=[crowd_assignment.pk], provider=platform)
    return result


def link_worker_ensure(*, batch: CrowdBatch, worker_id: str) -> Annotator:
    """The worker a link brings, by the id the platform gave them (made on their first visit)."""
    if not WORKER_ID.fullmatch(worker_id or ""):
        raise UserError("the link must carry your worker id (letters, digits, - _ . :, at most 64)")
    worker, _ = Annotator.objects.get_or_create(provider=batch.provider, external_id=worker_id)
    if worker.is_blocked:
        raise UserError("this worker is blocked")
    return worker


def address_key(address: str) -> str:
    """The key an address is counted under: a keyed hash (the address itself is not stored), of
    the whole /64 for IPv6, which one subscriber usually gets."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        ip = None
    if ip is not None and ip.version == 6 and ip.ipv4_mapped is None:
        address = str(ipaddress.ip_network(f"{ip}/64", strict=False))
    elif ip is not None and ip.version == 6:
        address = str(ip.ipv4_mapped)
    return salted_hmac(_ADDRESS_SALT, address, algorithm="sha256").hexdigest()


def link_worker_enter(*, batch: CrowdBatch, params: Mapping[str, str], address: str, now=None) -> Annotator:
    """A worker arriving by the batch's link with the platform's parameters (``params``, the query
    string) from ``address``. The platform's checks come first, so a refused visit stores
    nothing; a worker id new to the batch is recorded under its address's key, and refused when
    that address brought ``new_workers_per_hour`` new ids in the last hour."""
    platform = provider_for(batch=batch)
    platform.link_entry_check(batch=batch, params=params)
    worker_id = platform.link_worker_id(params=params)
    if not WORKER_ID.fullmatch(worker_id or ""):
        raise UserError("the link must carry your worker id (letters, digits, - _ . :, at most 64)")
    key = address_key(address)
    with transaction.atomic():
        # Entries of a batch are made one at a time: two new ids at once cannot both take the
        # address's last one.
        CrowdBatch.objects.select_for_update().filter(pk=batch.pk).first()
        entry = (
            CrowdLinkEntry.objects.select_related("worker")
            .filter(batch=batch, worker__provider=batch.provider, worker__external_id=worker_id)
            .first()
        )
        if entry is not None:
            if entry.worker.is_blocked:
                raise UserError("this worker is blocked")
            return entry.worker
        since = (now or timezone.now()) - timedelta(hours=1)
        limit = platform.entry_limits(batch=batch).new_workers_per_hour
        if CrowdLinkEntry.objects.filter(batch=batch, address=key, created_at__gte=since).count() >= limit:
            raise EntryLimitError(
                f"{limit} worker ids came to this study from your network in the last hour: try again later"
            )
        worker = link_worker_ensure(batch=batch, worker_id=worker_id)
        CrowdLinkEntry.objects.create(
            batch=batch, worker=worker, address=key, session=platform.link_session(params=params)[:64]
        )
    return worker


def link_unit_next(*, batch: CrowdBatch, worker: Annotator) -> CrowdAssignment | None:
    """The worker's current unit of the batch, or the next one; None when they are done (their
    quota of units_per_worker, or nothing left)."""
    if batch.status != CrowdBatchStatus.PUBLISHED:
        raise UserError("this study is closed")
    mine = CrowdAssignment.objects.filter(batch=batch, worker=worker).select_related("assignment")
    for ca in mine:
        if ca.assignment is not None and ca.assignment.status == AssignmentStatus.LEASED:
            if ca.assignment.leased_until >= timezone.now():
                return ca
    platform = provider_for(batch=batch)
    quota = platform.units_per_worker(batch=batch)
    done = mine.filter(assignment__status=AssignmentStatus.SUBMITTED).count()
    if done >= quota:
        return None
    entry = CrowdLinkEntry.objects.filter(batch=batch, worker=worker).first()
    if entry is not None:
        limit = platform.entry_limits(batch=batch).places
        if link_places_held(batch=batch, address=entry.address) >= limit:
            raise EntryLimitError(
                f"work from your network holds {limit} units of this study that await confirmation: come back later"
            )
    open_questions = QuestionWork.objects.filter(dataset=batch.dataset, is_open=True).values("question_id")
    # A unit the worker scored, or one taken back from them, is not offered again; one whose lease
    # ran out is, so that a worker who paused can still score every unit of their share.
    finished = Assignment.objects.filter(
        annotator=worker, status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.RELEASED]
    ).values("question_id")
    tasks = (
        CrowdTask.objects.filter(batch=batch, status=CrowdTaskStatus.PUBLISHED, question_id__in=open_questions)
        .exclude(question_id__in=finished)
        .order_by("pk")
    )
    for task in tasks[:50]:
        try:
            return crowd_assignment_enter(
                provider=batch.provider,
                external_id=f"{batch.pk}:{task.pk}:{worker.external_id}",
                batch=batch,
                task=task,
                worker=worker,
                lease_seconds=platform.lease_seconds(batch=batch),
            )
        except UserError:
            continue  # filled up meanwhile
    return None
