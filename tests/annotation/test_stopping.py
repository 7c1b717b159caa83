"""Probabilistic stopping (annotation.stopping) on constructed score sequences."""

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from annotation.rules import FalseDecision, GroundTruthDecision
from annotation.stopping import (
    DEFAULT_ALPHA,
    MIN_FIT_RESPONSES,
    FalseCandidateRole,
    GroundTruthRole,
    fit_alpha,
    outlook,
    outlook_table,
)

RULES = SimpleNamespace(
    acceptable_min_score=3,
    acceptable_min_count=3,
    ungrammatical_max_score=0,
    ungrammatical_min_count=3,
    ground_truth_low_max_score=3,
    ground_truth_low_min_count=3,
)
# Close to what Sato et al.'s released scores fit (bench/stopping.py): (ungrammatical, acceptable, neither).
FALSE_ALPHA = (7.0, 10.0, 36.0)
UNIFORM_GT = (1.0, 1.0)


@pytest.fixture
def false_role():
    return FalseCandidateRole(RULES)


@pytest.fixture
def gt_role():
    return GroundTruthRole(RULES)


def false_outlook(role, values, alpha=FALSE_ALPHA):
    return outlook(role, role.counts(values), planned=5, alpha=alpha)


def test_a_clearly_wrong_candidate_stops_after_two_scores(false_role):
    # given a false candidate scored 1 and 1: the deterministic rule still waits (three 5s could follow)
    result = false_outlook(false_role, [1, 1])
    # then the model is all but sure it stays kept and it stops at a 2 % tolerance, not at 0
    assert result.decision == FalseDecision.KEPT and not result.decided
    assert result.stops(0.02)
    assert not result.stops(0)


def test_three_low_scores_stop_by_the_rule_whatever_the_tolerance(false_role):
    result = false_outlook(false_role, [1, 1, 1])
    assert result.decided and result.change == 0.0
    assert result.stops(0) and result.stops(1e-9)


def test_split_scores_do_not_stop(false_role):
    # 3, 0, 5: one ungrammatical and two acceptable scores; the next three decide
    result = false_outlook(false_role, [3, 0, 5])
    assert result.change > 0.2
    assert not result.stops(0.1)


def test_the_change_probability_is_the_exact_beta_binomial_sum(false_role):
    # after two "neither" scores only three acceptable or three ungrammatical scores change "kept"
    a_ungr, a_acc, a_other = FALSE_ALPHA
    total = sum(FALSE_ALPHA) + 2

    def all_three(a):
        return np.prod([(a + j) / (total + j) for j in range(3)])

    assert false_outlook(false_role, [1, 2]).change == pytest.approx(all_three(a_acc) + all_three(a_ungr))


def test_an_adversarial_order_is_decided_wrongly_only_with_a_tolerance(false_role):
    # given the scores 1, 1, 5, 5, 5 arriving in that order (all five say: acceptable)
    scores = [1, 1, 5, 5, 5]
    full = false_role.decide(false_role.counts(scores), 5)
    assert full == FalseDecision.ACCEPTABLE

    def stopped(tolerance):
        for n in range(1, 6):
            result = false_outlook(false_role, scores[:n])
            if result.stops(tolerance):
                return n, result.decision
        raise AssertionError("five scores always decide")

    # then a 2 % tolerance stops after the two 1s and calls it kept (a risk the model put at ~1 %) ...
    assert stopped(0.02) == (2, FalseDecision.KEPT)
    # ... while the deterministic rule waits for the fifth score and gets it right
    assert stopped(0) == (5, FalseDecision.ACCEPTABLE)


def test_the_order_of_the_scores_seen_does_not_matter(false_role):
    outlooks = {false_outlook(false_role, order) for order in itertools.permutations([0, 3, 1])}
    assert len(outlooks) == 1


@pytest.mark.parametrize("role_class", [FalseCandidateRole, GroundTruthRole])
def test_tolerance_zero_is_exactly_the_deterministic_rule(role_class):
    role = role_class(RULES)
    alpha = (1.0,) * role.categories
    for seen, result in outlook_table(role, planned=5, alpha=alpha).items():
        deterministic = role.decide(seen, 5) not in (FalseDecision.UNDECIDED, GroundTruthDecision.UNDECIDED)
        assert result.stops(0) == deterministic, seen
        assert result.decided == deterministic
        if deterministic:
            assert result.stops(1e-12)


def test_a_likely_rejected_ground_truth_closes_the_question(gt_role):
    # two low scores of five planned: a uniform prior makes the third low score very likely
    result = outlook(gt_role, gt_role.counts([2, 1]), planned=5, alpha=UNIFORM_GT)
    assert result.decision == GroundTruthDecision.REJECTED
    assert result.stops(0.1) and not result.stops(0.01)


def test_a_ground_truth_scored_5_5_passes_at_a_normal_tolerance(gt_role):
    result = outlook(gt_role, gt_role.counts([5, 5]), planned=5, alpha=(1.0, 11.0))
    assert result.decision == GroundTruthDecision.PASSED and result.stops(0.02)


def test_fit_recovers_the_parameters_of_simulated_responses():
    rng = np.random.default_rng(1)
    alpha = np.array([2.0, 3.0, 10.0])
    shares = rng.dirichlet(alpha, size=20000)
    counts = np.array([rng.multinomial(5, p) for p in shares])
    assert fit_alpha(counts) == pytest.approx(alpha, rel=0.15)


def test_too_few_completed_responses_keep_the_default_prior():
    counts = np.array([[0, 0, 5]] * (MIN_FIT_RESPONSES - 1))
    assert fit_alpha(counts) == (DEFAULT_ALPHA,) * 3


def test_responses_with_a_single_score_do_not_count_towards_a_fit():
    counts = np.array([[0, 0, 1]] * (MIN_FIT_RESPONSES * 2))
    assert fit_alpha(counts) == (DEFAULT_ALPHA,) * 3


def test_weighted_rows_fit_as_the_rows_repeated():
    rng = np.random.default_rng(2)
    counts = np.array([rng.multinomial(5, p) for p in rng.dirichlet([1.0, 2.0, 6.0], size=400)])
    rows, weights = np.unique(counts, axis=0, return_counts=True)
    assert fit_alpha(rows, weights=weights) == pytest.approx(fit_alpha(counts), rel=1e-3)
