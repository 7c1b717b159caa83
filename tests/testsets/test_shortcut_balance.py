"""The shortcut-aware choice of false candidates removes the shortcut a set was built to carry."""

import random

import pytest

from tests.testsets.shortcut_sets import skewed_length_pools, skewed_style_pools
from testsets.shortcuts.audit import shortcut_audit_compute
from testsets.shortcuts.balance import BalanceOptions, ChoicePool, balanced_choice
from testsets.shortcuts.baselines import AuditOptions
from testsets.shortcuts.pools import Pool

K = 3


def choice_pools(raw: list[tuple[str, list[str]]]) -> list[ChoicePool]:
    return [
        ChoicePool(q, gt, tuple(range(100 * q, 100 * q + len(false))), tuple(false))
        for q, (gt, false) in enumerate(raw)
    ]


def at_random(pools: list[ChoicePool], seed: int = 0) -> dict[int, tuple[int, ...]]:
    rng = random.Random(seed)
    return {p.question_id: tuple(rng.sample(p.false_ids, K)) for p in pools}


def audit(pools: list[ChoicePool], chosen: dict[int, tuple[int, ...]]) -> dict[str, dict]:
    audited = []
    for pool in pools:
        texts = dict(zip(pool.false_ids, pool.false_texts, strict=True))
        candidates = [pool.ground_truth, *(texts[i] for i in chosen[pool.question_id])]
        order = list(range(len(candidates)))
        random.Random(pool.question_id).shuffle(order)
        audited.append(Pool(pool.question_id, tuple(candidates[i] for i in order), order.index(0)))
    result = shortcut_audit_compute(audited, AuditOptions())
    return {row["name"]: row for row in result["baselines"]}


def test_a_length_shortcut_of_a_random_choice_is_gone_after_the_balanced_choice():
    pools = choice_pools(skewed_length_pools())
    assert audit(pools, at_random(pools))["longest"]["above_chance"]
    result = balanced_choice(pools, k=K, options=BalanceOptions(rounds=0))
    balanced = audit(pools, result.chosen)
    assert not balanced["longest"]["above_chance"]
    assert balanced["longest"]["ci95"][0] <= 0.25 <= balanced["longest"]["ci95"][1]
    # length competes with the similarity cue in a few questions
    assert result.unbalanced_length < 0.2 * len(pools)


def test_a_style_shortcut_of_a_random_choice_is_gone_after_the_balanced_choice():
    pools = choice_pools(skewed_style_pools())
    before = audit(pools, at_random(pools))["surface_classifier"]
    assert before["above_chance"]
    result = balanced_choice(pools, k=K, options=BalanceOptions(rounds=3))
    after = audit(pools, result.chosen)
    assert not any(row["above_chance"] for row in after.values())
    assert after["surface_classifier"]["accuracy"] < before["accuracy"] - 0.15
    assert len(result.rounds) == 3


def test_only_kept_candidates_are_chosen():
    pools = choice_pools(skewed_length_pools(n=30))
    result = balanced_choice(pools, k=K, options=BalanceOptions(rounds=1))
    for pool in pools:
        chosen = result.chosen[pool.question_id]
        assert len(set(chosen)) == K and set(chosen) <= set(pool.false_ids)


def test_the_same_seed_gives_the_same_choice_and_another_seed_another():
    pools = choice_pools(skewed_length_pools(n=60))
    first = balanced_choice(pools, k=K, options=BalanceOptions(rounds=2, seed=3)).chosen
    assert balanced_choice(pools, k=K, options=BalanceOptions(rounds=2, seed=3)).chosen == first
    assert balanced_choice(pools, k=K, options=BalanceOptions(rounds=2, seed=4)).chosen != first


def test_a_question_with_too_few_kept_candidates_is_counted_and_not_chosen_for():
    pools = choice_pools(skewed_length_pools(n=20))
    short = ChoicePool(999, "a ground truth", (1, 2), ("one", "two"))
    result = balanced_choice([*pools, short], k=K, options=BalanceOptions(rounds=0))
    assert result.too_few == 1 and 999 not in result.chosen and result.questions == 20


@pytest.mark.parametrize("rounds", [0, 2])
def test_a_question_without_choice_counts_as_unbalanced_when_it_misses_its_targets(rounds):
    """Exactly k kept candidates, all shorter than the ground truth: every question's one choice
    leaves the ground truth the longest, and all but a quarter crowd that place beyond its share."""
    pools = [ChoicePool(q, "much longer ground truth " * 3, (1, 2, 3), ("a b", "c d", "e f")) for q in range(40)]
    result = balanced_choice(pools, k=K, options=BalanceOptions(rounds=rounds))
    assert result.unbalanced_length == 30
    assert result.unbalanced >= result.unbalanced_length
    assert result.report(BalanceOptions(rounds=rounds))["unbalanced"] == result.unbalanced
