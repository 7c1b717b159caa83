"""The shortcut-aware plan of a test-set build: which kept false candidates each question takes, the
original questions first, then each pool's derived questions (§3.2) from the candidates the ones
before them left, each pass balanced over all pools (testsets.shortcuts.balance)."""

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from annotation.models import Dataset
from annotation.rules import GroundTruthDecision, QuestionPool, derived_count, plan_orders
from testsets.selectors import candidate_texts
from testsets.shortcuts.balance import BalanceOptions, BalanceResult, ChoicePool, balanced_choice

_COUNTS = ("questions", "unbalanced", "unbalanced_length", "unbalanced_similarity", "unbalanced_classifier")


@dataclass
class BalancePlan:
    choice: dict[int, tuple[int, ...]] = field(default_factory=dict)  # ground truth id -> its false candidates
    drop: set[int] = field(default_factory=set)  # ground truths whose question is left out
    report: dict = field(default_factory=dict)


def balance_plan(
    pools: list[QuestionPool],
    *,
    dataset: Dataset,
    false_per_question: int,
    rng_for: Callable[[int], random.Random],
    options: BalanceOptions,
) -> BalancePlan:
    """``rng_for(question_id)``: the random generator the build's plan uses for that pool (its
    orders decide which acceptable candidates become derived questions)."""
    k = false_per_question
    passing = [
        p for p in pools if p.ground_truth == GroundTruthDecision.PASSED and p.ground_truth_id and len(p.kept) >= k
    ]
    orders = {p.question_id: plan_orders(p, rng_for(p.question_id)) for p in passing}
    derived = {
        p.question_id: orders[p.question_id][1][
            : derived_count(kept=len(p.kept), acceptable=len(p.acceptable_as_ground_truth), false_per_question=k)
        ]
        for p in passing
    }
    ids = {i for p in passing for i in (p.ground_truth_id, *p.kept, *derived[p.question_id])}
    texts = candidate_texts(dataset=dataset, ids=ids)
    unused = {p.question_id: orders[p.question_id][0] for p in passing}
    plan = BalancePlan()
    results: list[BalanceResult] = []
    ground_truths = {p.question_id: p.ground_truth_id for p in passing}
    for step in range(1 + max((len(d) for d in derived.values()), default=0)):
        asked = []
        for p in passing:
            ground_truth = ground_truths[p.question_id] if step == 0 else _nth(derived[p.question_id], step - 1)
            if ground_truth is not None and len(unused[p.question_id]) >= k:
                ids_left = unused[p.question_id]
                asked.append(
                    (
                        p.question_id,
                        ChoicePool(
                            ground_truth, texts[ground_truth], tuple(ids_left), tuple(texts[i] for i in ids_left)
                        ),
                    )
                )
        if not asked:
            break
        result = balanced_choice([pool for _, pool in asked], k=k, options=options)
        results.append(result)
        for question_id, pool in asked:
            chosen = result.chosen.get(pool.question_id, ())
            plan.choice[pool.question_id] = chosen
            unused[question_id] = [i for i in unused[question_id] if i not in set(chosen)]
        if options.drop_unbalanced:
            plan.drop |= set(result.unbalanced_ids)
    plan.report = _report(results, options)
    return plan


def _nth(values: list[int], n: int) -> int | None:
    return values[n] if n < len(values) else None


def _report(results: list[BalanceResult], options: BalanceOptions) -> dict:
    """The originals' pass as before (counts, classifier accuracy by round), the counts summed over
    every pass, and the derived questions' share of them."""
    if not results:
        return {**options.describe(), **dict.fromkeys(_COUNTS, 0), "derived_questions": 0, "derived_unbalanced": 0}
    passes = [r.report(options) for r in results]
    report = dict(passes[0])
    for key in _COUNTS:
        report[key] = sum(p[key] for p in passes)
    report["derived_questions"] = sum(p["questions"] for p in passes[1:])
    report["derived_unbalanced"] = sum(p["unbalanced"] for p in passes[1:])
    return report
