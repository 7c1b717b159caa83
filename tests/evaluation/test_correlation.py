import itertools
import math

import numpy as np
import pytest

from evaluation.metrics.correlation import bootstrap_ci, correlate, kendall, spearman, split_half_bound

X = [3.1, 2.0, 4.5, 1.2, 5.0, 3.9, 0.7]
Y = [2.5, 2.9, 4.0, 0.3, 3.8, 4.4, 1.0]


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0] * len(values)
    for rank, i in enumerate(order, start=1):
        r[i] = rank
    return r


def test_spearman_equals_the_rank_difference_formula():
    # given no ties: rho = 1 - 6 sum d^2 / (n (n^2 - 1))
    n = len(X)
    d2 = sum((a - b) ** 2 for a, b in zip(ranks(X), ranks(Y), strict=True))
    assert spearman(X, Y, resamples=0).value == pytest.approx(1 - 6 * d2 / (n * (n * n - 1)))


def test_kendall_equals_concordant_minus_discordant_pairs():
    pairs = list(itertools.combinations(range(len(X)), 2))
    sign = [np.sign(X[i] - X[j]) * np.sign(Y[i] - Y[j]) for i, j in pairs]
    assert kendall(X, Y, resamples=0).value == pytest.approx(sum(sign) / len(pairs))


def test_reversed_ranking_is_minus_one_with_a_small_p_value():
    result = spearman([1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1], resamples=0)
    assert result.value == pytest.approx(-1.0)
    assert result.p_value < 0.001


def test_mappings_are_matched_by_system_name_not_order():
    human = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    metric = {"d": 40.0, "c": 30.0, "b": 20.0, "a": 10.0, "only-in-metric": 0.0}
    result = spearman(human, metric, resamples=0)
    assert result.value == pytest.approx(1.0)
    assert result.n == 4


def test_bootstrap_ci_contains_the_point_estimate_and_stays_in_range():
    result = spearman(X, Y, resamples=500, seed=1)
    assert -1 <= result.ci_low <= result.value <= result.ci_high <= 1


def test_bootstrap_ci_is_deterministic_per_seed():
    assert bootstrap_ci(X, Y, resamples=200, seed=7) == bootstrap_ci(X, Y, resamples=200, seed=7)
    assert bootstrap_ci(X, Y, resamples=200, seed=7) != bootstrap_ci(X, Y, resamples=200, seed=8)


def test_bootstrap_ci_narrows_with_more_systems():
    # given the same noisy relation observed on 8 and on 80 systems
    rng = np.random.default_rng(0)
    x = rng.normal(size=80)
    y = x + rng.normal(scale=0.8, size=80)
    small = bootstrap_ci(x[:8], y[:8], resamples=300)
    large = bootstrap_ci(x, y, resamples=300)
    assert large[1] - large[0] < small[1] - small[0]


def test_one_system_is_refused():
    with pytest.raises(ValueError, match="at least 2"):
        correlate([1], [2])


def test_two_systems_correlate_as_plus_or_minus_one_without_an_interval():
    same, reversed_ = correlate([1, 2], [3, 5], resamples=100), correlate([1, 2], [5, 3], "kendall", resamples=100)
    assert same.value == pytest.approx(1) and reversed_.value == pytest.approx(-1)
    assert math.isnan(same.ci_low) and math.isnan(reversed_.ci_high)


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="unknown correlation method"):
        correlate(X, Y, "pearson", resamples=0)


def test_as_dict_is_json_ready_without_nan():
    result = spearman([1, 2, 3], [1, 2, 3], resamples=0)
    assert result.as_dict()["ci_low"] is None


def ratings_from(annotator_means, responses=3):
    """Per-system ratings where annotator i rates every response annotator_means[system][i]."""
    return {s: [list(means)] * responses for s, means in annotator_means.items()}


def test_split_half_of_annotators_who_rank_systems_alike_is_one():
    # given every annotator rating a < d < b < c
    ratings = ratings_from({"a": [1, 1, 1, 2], "b": [3, 4, 4, 4], "c": [5, 5, 5, 5], "d": [2, 2, 3, 3]})
    assert split_half_bound(ratings, trials=20).mean == pytest.approx(1.0)


def test_split_half_with_two_annotators_correlates_their_system_scores():
    # given two annotators there is a single split: annotator 0 against annotator 1
    ratings = {
        "a": [[1, 3], [2, 4]],
        "b": [[4, 1], [5, 2]],
        "c": [[3, 5], [3, 5]],
        "d": [[2, 2], [1, 1]],
    }
    first = [np.mean([r[0] for r in ratings[s]]) for s in sorted(ratings)]
    second = [np.mean([r[1] for r in ratings[s]]) for s in sorted(ratings)]
    expected = spearman(first, second, resamples=0).value
    bound = split_half_bound(ratings, trials=5)
    assert bound.mean == pytest.approx(expected)
    assert bound.std == pytest.approx(0.0)


def test_split_half_is_deterministic_per_seed():
    rng = np.random.default_rng(3)
    ratings = {f"s{i}": rng.integers(1, 6, size=(10, 6)).tolist() for i in range(8)}
    assert split_half_bound(ratings, trials=30, seed=5) == split_half_bound(ratings, trials=30, seed=5)
    assert split_half_bound(ratings, trials=30, seed=5).values != split_half_bound(ratings, trials=30, seed=6).values


def test_split_half_needs_the_same_annotators_for_every_response():
    ratings = {"a": [[1, 2, 3]], "b": [[1, 2]], "c": [[1, 2, 3]]}
    with pytest.raises(ValueError):
        split_half_bound(ratings, trials=2)


def test_split_half_counts_the_distinct_halvings_of_four_annotators():
    # given 4 annotators: {01|23}, {02|13}, {03|12} are the only halvings
    rng = np.random.default_rng(1)
    ratings = {f"s{i}": rng.integers(1, 6, size=(5, 4)).tolist() for i in range(5)}
    bound = split_half_bound(ratings, trials=200)
    assert bound.distinct_splits == 3
    assert len({round(v, 12) for v in bound.values}) <= 3


def test_a_mapping_and_a_sequence_are_not_mixed():
    with pytest.raises(TypeError, match="not one of each"):
        correlate({"a": 1, "b": 2, "c": 3}, [1, 2, 3])


def test_two_systems_have_no_p_value_whatever_the_method():
    # scipy's Kendall gives an exact p of 1.0 for two systems, its Spearman NaN: both are reported as none
    for method in ("spearman", "kendall"):
        assert math.isnan(correlate([1, 2], [3, 5], method, resamples=0).p_value)
