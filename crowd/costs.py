"""What a batch will cost before it is published, and per question that survives the filter rules."""

from dataclasses import asdict, dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from django.db.models import Sum

from annotation.models import QuestionWork
from annotation.selectors import filter_preview, filter_rules_current
from crowd.models import CrowdBatch, CrowdBonus
from crowd.providers.base import Provider
from crowd.providers.registry import provider_for

CENT = Decimal("0.01")


@dataclass
class CostEstimate:
    units: int
    assignments_per_unit: int
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
    rewards = (reward * units * k).quantize(CENT)
    fees = (rewards * fee_rate).quantize(CENT, rounding=ROUND_HALF_UP)
    planned_bonus = Decimal(str(settings.get("bonus_per_assignment", "0"))) * units * k
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
