import random
from types import SimpleNamespace

import pytest

from annotation.rules import (
    FalseDecision,
    GroundTruthDecision,
    QuestionPool,
    ScoreCounts,
    decide_false_candidate,
    decide_ground_truth,
    derived_count,
    plan_orders,
    plan_questions,
)

RULES = SimpleNamespace(
    acceptable_min_score=3,
    acceptable_min_count=3,
    ungrammatical_max_score=0,
    ungrammatical_min_count=3,
    ground_truth_low_max_score=3,
    ground_truth_low_min_count=3,
)


def counts(scores: list[int]) -> ScoreCounts:
    return ScoreCounts(
        scores=len(scores),
        acceptable=sum(s >= 3 for s in scores),
        ungrammatical=sum(s == 0 for s in scores),
        low=sum(s <= 3 for s in scores),
    )


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([1, 2, 1, 1, 2], FalseDecision.KEPT),
        ([3, 3, 3, 1, 1], FalseDecision.ACCEPTABLE),  # >= 3 annotators gave >= 3
        ([0, 0, 0, 4, 4], FalseDecision.UNGRAMMATICAL),  # >= 3 annotators gave 0
        ([3, 3, 1, 1, 1], FalseDecision.KEPT),  # two acceptable votes are not enough
        ([0, 0, 1, 1, 1], FalseDecision.KEPT),
        ([3, 3], FalseDecision.UNDECIDED),  # three more annotators could make it acceptable
        ([1, 1, 1], FalseDecision.KEPT),  # two remaining cannot reach three votes
        ([3, 3, 3], FalseDecision.ACCEPTABLE),  # decided early
        ([1, 1], FalseDecision.UNDECIDED),
    ],
)
def test_false_candidate_decisions_follow_sato_et_al(scores, expected):
    assert decide_false_candidate(counts(scores), RULES, planned=5) == expected


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([5, 5, 4, 5, 5], GroundTruthDecision.PASSED),
        ([3, 3, 3, 5, 5], GroundTruthDecision.REJECTED),  # >= 3 annotators gave <= 3
        ([2, 3, 5, 5, 5], GroundTruthDecision.PASSED),
        ([5, 5, 5], GroundTruthDecision.PASSED),  # two remaining cannot reach three low votes
        ([3, 5], GroundTruthDecision.UNDECIDED),
        ([], GroundTruthDecision.UNDECIDED),
    ],
)
def test_ground_truth_decisions_follow_sato_et_al(scores, expected):
    assert decide_ground_truth(counts(scores), RULES, planned=5) == expected


def test_thresholds_come_from_the_rules_version():
    strict = SimpleNamespace(**{**RULES.__dict__, "acceptable_min_count": 2})
    assert decide_false_candidate(counts([3, 3, 1, 1, 1]), strict, planned=5) == FalseDecision.ACCEPTABLE


def pool(kept, acceptable=(), gt=GroundTruthDecision.PASSED):
    return QuestionPool(
        question_id=1,
        ground_truth_id=100,
        ground_truth=gt,
        kept=list(kept),
        acceptable_as_ground_truth=list(acceptable),
    )


def test_a_question_takes_k_false_candidates():
    plan = plan_questions(pool([1, 2, 3, 4, 5]), false_per_question=3)
    assert len(plan) == 1 and plan[0].ground_truth_id == 100 and len(plan[0].false_ids) == 3


def test_too_few_false_candidates_give_no_question():
    assert plan_questions(pool([1, 2]), false_per_question=3) == []


def test_rejected_ground_truth_gives_no_question():
    assert plan_questions(pool([1, 2, 3], gt=GroundTruthDecision.REJECTED), false_per_question=3) == []


def test_six_survivors_and_an_acceptable_candidate_give_a_derived_question():
    # given 6 kept false candidates and 2 acceptable candidates
    plan = plan_questions(pool([1, 2, 3, 4, 5, 6], acceptable=[50, 51]), false_per_question=3)
    # then one extra question uses an acceptable candidate as ground truth and the other 3 false ones
    assert [p.derived for p in plan] == [False, True]
    assert plan[1].ground_truth_id in (50, 51)
    assert set(plan[0].false_ids).isdisjoint(plan[1].false_ids)
    assert set(plan[0].false_ids) | set(plan[1].false_ids) == {1, 2, 3, 4, 5, 6}


def test_five_survivors_give_no_derived_question():
    plan = plan_questions(pool([1, 2, 3, 4, 5], acceptable=[50]), false_per_question=3)
    assert [p.derived for p in plan] == [False]


def test_derived_questions_are_bounded_by_unused_false_candidates():
    plan = plan_questions(pool(range(1, 10), acceptable=[50, 51, 52, 53]), false_per_question=3)
    assert [p.derived for p in plan] == [False, True, True]


def test_plan_is_deterministic_for_a_seed_and_varies_across_seeds():
    p = pool(range(1, 20), acceptable=[50, 51, 52])
    first = plan_questions(p, false_per_question=3, rng=random.Random("7:1"))
    again = plan_questions(p, false_per_question=3, rng=random.Random("7:1"))
    other = [plan_questions(p, false_per_question=3, rng=random.Random(f"{s}:1")) for s in range(5)]
    assert first == again
    assert any(o != first for o in other)


def test_a_choice_names_the_false_candidates_each_ground_truth_takes():
    plan = plan_questions(
        pool(range(1, 10), acceptable=[50, 51]), false_per_question=3, choice={100: (7, 8, 9), 50: (1, 5, 6)}
    )
    assert [(p.ground_truth_id, p.false_ids) for p in plan] == [(100, (7, 8, 9)), (50, (1, 5, 6)), (51, (2, 3, 4))]


def test_a_choice_of_candidates_already_taken_falls_back_to_the_plans_order():
    plan = plan_questions(
        pool(range(1, 7), acceptable=[50]), false_per_question=3, choice={100: (1, 2, 3), 50: (3, 4, 5)}
    )
    assert [p.false_ids for p in plan] == [(1, 2, 3), (4, 5, 6)]


def test_a_dropped_derived_question_uses_up_its_candidates_and_a_dropped_original_the_pool():
    p = pool(range(1, 10), acceptable=[50, 51])
    plan = plan_questions(p, false_per_question=3, choice={100: (1, 2, 3), 50: (4, 5, 6)}, drop={50})
    assert [(q.ground_truth_id, q.false_ids) for q in plan] == [(100, (1, 2, 3)), (51, (7, 8, 9))]
    assert plan_questions(p, false_per_question=3, drop={100}) == []


def test_plan_orders_and_derived_count_say_which_acceptable_candidates_become_questions():
    p = pool(range(1, 10), acceptable=[50, 51, 52, 53])
    kept, acceptable = plan_orders(p, random.Random("3:1"))
    n = derived_count(kept=9, acceptable=4, false_per_question=3)
    plan = plan_questions(p, false_per_question=3, rng=random.Random("3:1"))
    assert [q.ground_truth_id for q in plan if q.derived] == acceptable[:n] and n == 2
    assert plan[0].false_ids == tuple(kept[:3])
