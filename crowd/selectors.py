"""Reads: what a batch costs and has done, what it should warn about, the review's suggestions,
whether a sync is under way, the batches a worker has a platform account in, and the worker pages'
signed tokens and links."""

from dataclasses import asdict, dataclass, field
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal

from django.core import signing
from django.db.models import Count, F, Q, QuerySet, Sum
from django.utils import timezone

from annotation.models import Annotator, Assignment, AssignmentStatus, QuestionWork, Score
from annotation.selectors import filter_preview, filter_rules_current
from annotation.selectors_annotators import annotators_quality
from annotation.selectors_stopping_cost import stopping_cost_expected
from core.errors import UserError
from core.models import Job, JobStatus
from crowd.job_params import CrowdSyncParams
from crowd.models import (
    CrowdAssignment,
    CrowdAssignmentStatus,
    CrowdBatch,
    CrowdBonus,
    CrowdBonusStatus,
    CrowdLinkEntry,
    CrowdTaskStatus,
)
from crowd.providers.base import Blocking, Provider
from crowd.providers.link import link_token_read
from crowd.providers.mturk_client import FEEDBACK_MAX
from crowd.providers.registry import PROVIDERS, provider_class, provider_for

CENT = Decimal("0.01")
# A sync job pending or running for longer than this without a sign of life (a lost message, a
# dead worker) no longer holds back the periodic sync of its batch.
SYNC_IN_FLIGHT_FOR = timedelta(hours=1)
_UNIT_SALT = "wellchosen.crowd.unit"


@dataclass
class CostEstimate:
    units: int
    assignments_per_unit: int  # K, planned
    expected_assignments_per_unit: float  # under the dataset's stopping: what is paid for
    expected_scores_per_response: float
    basis: str  # where the two expected figures come from
    reward: Decimal
    fee_rate: Decimal
    rewards: Decimal
    fees: Decimal
    bonuses: Decimal
    total: Decimal
    expected_yield: float | None  # share of questions a release built now would keep
    per_finished_question: Decimal | None
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {k: (str(v) if isinstance(v, Decimal) else v) for k, v in asdict(self).items()}


def crowd_cost_estimate(*, batch: CrowdBatch, fee_rate: Decimal | None = None) -> CostEstimate:
    """reward x assignments x (1 + commission) + bonuses, over the units the batch has (or would
    have if published now), and divided by the questions the filter rules are expected to keep.
    The assignments per unit are those expected under the dataset's stopping (a unit takes
    annotators until its last response stops; annotation.selectors_stopping_cost), K at most.
    The reward's default, the commission and its warnings are the provider's."""
    platform = provider_for(batch=batch)
    dataset = batch.dataset
    k = dataset.annotators_per_item
    settings = batch.settings or {}
    units = batch.tasks.count() or QuestionWork.objects.filter(dataset=dataset, is_open=True).count()
    if not units:
        units = dataset.questions.filter(derived_from__isnull=True).count()
    if batch.max_units is not None:
        units = min(units, batch.max_units)
    reward = platform.reward(batch=batch)
    if fee_rate is None:
        fee_rate = platform.fee(batch=batch)
    expected = stopping_cost_expected(dataset=dataset)
    assignments = units * Decimal(str(expected.assignments_per_unit))
    rewards = (reward * assignments).quantize(CENT)
    fees = (rewards * fee_rate).quantize(CENT, rounding=ROUND_HALF_UP)
    planned_bonus = Decimal(str(settings.get("bonus_per_assignment", "0"))) * assignments
    recorded = CrowdBonus.objects.filter(crowd_assignment__batch=batch).aggregate(s=Sum("amount"))["s"] or Decimal(0)
    bonuses = (max(planned_bonus, recorded) * (1 + fee_rate)).quantize(CENT)
    total = rewards + fees + bonuses
    preview = filter_preview(dataset=dataset, rules=filter_rules_current())
    expected_yield = preview.buildable_questions / preview.questions if preview.questions else None
    per_question = None
    if expected_yield and units:
        per_question = (total / (Decimal(units) * Decimal(str(expected_yield)))).quantize(CENT)
    warnings = platform.cost_warnings(batch=batch)
    if expected_yield is None:
        warnings.append("no questions yet: the cost per finished question needs a filter preview")
    elif expected_yield == 0:
        warnings.append("the filter rules keep no question yet (too few scores?): no cost per finished question")
    return CostEstimate(
        units=units,
        assignments_per_unit=k,
        expected_assignments_per_unit=expected.assignments_per_unit,
        expected_scores_per_response=expected.scores_per_response,
        basis=expected.basis,
        reward=reward,
        fee_rate=fee_rate,
        rewards=rewards,
        fees=fees,
        bonuses=bonuses,
        total=total,
        expected_yield=expected_yield,
        per_finished_question=per_question,
        warnings=warnings,
    )


def crowd_balance(*, batch: CrowdBatch, provider: Provider | None = None) -> str | None:
    """Money left on the requester account of the batch's platform, when the platform says."""
    return provider_for(batch=batch, provider=provider).balance(batch=batch)


def crowd_batch_status(*, batch: CrowdBatch) -> dict:
    tasks = dict(batch.tasks.order_by().values("status").annotate(n=Count("id")).values_list("status", "n"))
    assignments = dict(batch.assignments.order_by().values("status").annotate(n=Count("id")).values_list("status", "n"))
    return {
        "batch": batch.name,
        "provider": batch.provider,
        "status": batch.status,
        "tasks": tasks,
        "assignments": assignments,
        # Saved here, not yet confirmed by the platform (crowd.services.confirmation): shown, not counted.
        "scores_awaiting_confirmation": Score.objects.filter(assignment__crowd__batch=batch, counted=False).count(),
        "bonuses_paid": str(
            CrowdBonus.objects.filter(crowd_assignment__batch=batch, status=CrowdBonusStatus.PAID).aggregate(
                s=Sum("amount")
            )["s"]
            or Decimal("0.00")
        ),
        "warnings": crowd_batch_warnings(batch=batch),
    }


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


def crowd_review_suggestions(*, batch: CrowdBatch) -> list[dict]:
    """For every submission awaiting review: approve or reject, and feedback to send, from the
    quality-control measures (attention check of the unit, the worker's flags)."""
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


def crowd_sync_in_flight(*, batch: CrowdBatch, now=None) -> bool:
    """Whether a sync job of the batch is queued or running (and showed a sign of life lately)."""
    since = (now or timezone.now()) - SYNC_IN_FLIGHT_FOR
    jobs = Job.objects.filter(
        kind=CrowdSyncParams.kind, status__in=[JobStatus.PENDING, JobStatus.RUNNING], params__batch_id=batch.pk
    )
    return jobs.filter(Q(heartbeat_at__gte=since) | Q(heartbeat_at__isnull=True, created_at__gte=since)).exists()


def crowd_batches_of_worker(*, worker: Annotator) -> QuerySet[CrowdBatch]:
    """The batches of the worker's platform they worked in, where they have an account there."""
    platform = PROVIDERS.get(worker.provider)
    if platform is None or platform.blocking is Blocking.HERE_ONLY:
        return CrowdBatch.objects.none()
    return CrowdBatch.objects.filter(assignments__worker=worker, provider=worker.provider).distinct().order_by("pk")


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


def link_units_due(*, batch: CrowdBatch, worker: Annotator, now=None) -> int:
    """How many units a link worker must have scored to be shown the completion code: their share
    (units_per_worker), or what the batch still has for them where that is less. A unit counts
    while it is open and has a free place or one held by another worker's lease (which may run
    out): an id that scored a unit while the others were leased is not told it has finished. A
    unit whose places are all taken by submitted work, or that its decisions closed, does not
    count: nobody can score it now. At least one."""
    share = provider_for(batch=batch).units_per_worker(batch=batch)
    scored = Assignment.objects.filter(annotator=worker, status=AssignmentStatus.SUBMITTED).values("question_id")
    leased = (
        Assignment.objects.filter(status=AssignmentStatus.LEASED, leased_until__gte=now or timezone.now())
        .exclude(annotator=worker)
        .values("question_id")
    )
    open_units = Q(question__work__is_open=True) & (
        Q(question__work__slots_taken__lt=F("question__work__slots_needed")) | Q(question_id__in=leased)
    )
    available = batch.tasks.filter(status=CrowdTaskStatus.PUBLISHED).filter(open_units | Q(question_id__in=scored))
    return max(1, min(share, available.count()))


def link_places_held(*, batch: CrowdBatch, address: str, now=None) -> int:
    """Places of the batch held by the worker ids that entered it from one address (its key):
    their live leases and their submitted work the platform has not confirmed."""
    now = now or timezone.now()
    workers = CrowdLinkEntry.objects.filter(batch=batch, address=address).values("worker_id")
    unconfirmed = CrowdAssignment.objects.filter(batch=batch, worker_id__in=workers).exclude(
        provider_for(batch=batch).confirmed()
    )
    return unconfirmed.filter(
        Q(assignment__status=AssignmentStatus.SUBMITTED)
        | Q(assignment__status=AssignmentStatus.LEASED, assignment__leased_until__gte=now)
    ).count()


def unit_token(*, crowd_assignment: CrowdAssignment) -> str:
    """Signed id of the worker's crowd assignment: the capability their page submits with (MTurk
    frames our page on another site, where the browser may withhold our session cookie)."""
    return signing.dumps({"ca": crowd_assignment.pk, "w": crowd_assignment.worker_id}, salt=_UNIT_SALT)


def unit_from_token(*, token: str, max_age_seconds: int = 7 * 86400) -> CrowdAssignment:
    try:
        data = signing.loads(token, salt=_UNIT_SALT, max_age=max_age_seconds)
    except signing.BadSignature as exc:
        raise UserError("this work link is not valid (or has expired)") from exc
    ca = (
        CrowdAssignment.objects.select_related("assignment__question__dataset", "worker", "batch", "task")
        .filter(pk=data.get("ca"), worker_id=data.get("w"))
        .first()
    )
    if ca is None or ca.assignment is None:
        raise UserError("this work link is not valid")
    return ca


def crowd_pay_lines(dataset) -> list[str]:
    """How the dataset's published crowd batches paid annotators, for a test set's dataset card
    (registered in annotation.annotator_pay). The reward is the batch's setting or its provider's
    default, in the platform account's currency; read without a provider client, so no
    credentials are needed."""
    lines = []
    for batch in CrowdBatch.objects.filter(dataset=dataset, published_at__isnull=False).order_by("name"):
        settings = batch.settings or {}
        reward = Decimal(str(settings.get("reward", provider_class(batch.provider).default_reward)))
        line = f"Crowd batch {batch.name} on {batch.get_provider_display()}: {reward} per assignment"
        if settings.get("bonus_per_assignment"):
            line += f", planned bonus {settings['bonus_per_assignment']} per assignment"
        lines.append(line + " (in the platform account's currency).")
    return lines
