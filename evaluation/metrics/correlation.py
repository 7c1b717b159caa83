"""Rank correlation between two system-score vectors, bootstrap CIs, and the split-half human bound.

* :func:`correlate`: Spearman's rho or Kendall's tau-b (``scipy.stats``) with its two-sided p-value, and
  a percentile bootstrap confidence interval that resamples *systems* with replacement (seeded
  ``numpy`` generator; resamples whose scores are constant on one side, where a rank correlation is
  undefined, are drawn again).
* :func:`split_half_bound`: how well humans agree with themselves. In each trial the annotators are
  split into two random halves; each half gives every system a score (mean over its responses of the
  mean rating of that half's annotators), and the two halves' system scores are correlated. The bound
  is the mean over seeded trials (Sato et al. 2020 report 0.87).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

METHODS = ("spearman", "kendall")


@dataclass(frozen=True)
class Correlation:
    method: str
    value: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float = 0.95
    resamples: int = 0

    def as_dict(self) -> dict:
        return _jsonable(asdict(self))


@dataclass(frozen=True)
class SplitHalf:
    method: str
    mean: float
    std: float
    min: float
    max: float
    trials: int
    distinct_splits: int  # different halvings among the trials (3 at most with 4 annotators)
    annotators: int
    values: tuple[float, ...]

    def as_dict(self, with_values: bool = False) -> dict:
        d = asdict(self)
        if not with_values:
            d.pop("values")
        return _jsonable(d)


def _jsonable(d: dict) -> dict:
    """NaN is not JSON: None in its place."""
    return {
        k: (None if isinstance(v, float) and math.isnan(v) else list(v) if isinstance(v, tuple) else v)
        for k, v in d.items()
    }


def _coefficient(method: str, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from scipy import stats  # imported when used: it costs every process ~0.4 s to start

    if method == "spearman":
        result = stats.spearmanr(x, y)
    elif method == "kendall":
        result = stats.kendalltau(x, y)
    else:
        raise ValueError(f"unknown correlation method {method!r}; known: {', '.join(METHODS)}")
    return float(result.statistic), float(result.pvalue)


def aligned(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The systems scored in both mappings (sorted) and their two score vectors."""
    systems = sorted(set(a) & set(b))
    return systems, np.array([a[s] for s in systems], float), np.array([b[s] for s in systems], float)


def bootstrap_ci(
    x: Sequence[float],
    y: Sequence[float],
    method: str = "spearman",
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the correlation, resampling systems (pairs) with replacement."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    if n < 3 or resamples < 1:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    values = np.empty(resamples)
    drawn = 0
    attempts = 0
    while drawn < resamples:
        attempts += 1
        if attempts > resamples * 20:
            return math.nan, math.nan  # (nearly) constant scores: no interval
        idx = rng.integers(0, n, size=n)
        xs, ys = x[idx], y[idx]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            continue
        values[drawn] = _coefficient(method, xs, ys)[0]
        drawn += 1
    alpha = (1 - confidence) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return float(low), float(high)


def correlate(
    x: Sequence[float] | Mapping[str, float],
    y: Sequence[float] | Mapping[str, float],
    method: str = "spearman",
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Correlation:
    """Correlation of two system-score vectors (or ``{system: score}`` mappings, matched by system)."""
    if isinstance(x, Mapping) != isinstance(y, Mapping):
        raise TypeError("give two {system: score} mappings or two score sequences, not one of each")
    if isinstance(x, Mapping):
        _, xv, yv = aligned(x, y)
    else:
        xv, yv = np.asarray(list(x), float), np.asarray(list(y), float)
    if len(xv) != len(yv):
        raise ValueError(f"score vectors differ in length: {len(xv)} and {len(yv)}")
    if len(xv) < 2:
        # Two systems give +1 or -1 (the same order or not), with no p-value and no interval.
        raise ValueError(f"a rank correlation needs at least 2 systems, got {len(xv)}")
    value, p_value = _coefficient(method, xv, yv)
    if len(xv) < 3:
        p_value = math.nan  # scipy gives Spearman NaN but Kendall an exact 1.0: neither means anything here
    low, high = bootstrap_ci(xv, yv, method, resamples=resamples, seed=seed, confidence=confidence)
    return Correlation(method, value, p_value, low, high, len(xv), confidence, resamples)


def spearman(x, y, **kwargs) -> Correlation:
    return correlate(x, y, "spearman", **kwargs)


def kendall(x, y, **kwargs) -> Correlation:
    return correlate(x, y, "kendall", **kwargs)


def split_half_bound(
    ratings: Mapping[str, Sequence[Sequence[float]]],
    method: str = "spearman",
    *,
    trials: int = 1000,
    seed: int = 0,
) -> SplitHalf:
    """Mean correlation between the system scores of two random halves of the annotators.

    ``ratings[system]`` lists each response's ratings, annotator ``i`` at position ``i`` (the same
    annotator positions for every response). With an odd number of annotators the first half has
    one fewer.
    """
    systems = sorted(ratings)
    if len(systems) < 2:
        raise ValueError(f"a rank correlation needs at least 2 systems, got {len(systems)}")
    arrays = []
    for system in systems:
        array = np.asarray(ratings[system], float)
        if array.ndim != 2 or array.shape[0] == 0:
            raise ValueError(f"system {system!r}: expected a non-empty list of per-response rating lists")
        arrays.append(array)
    k = arrays[0].shape[1]
    if any(a.shape[1] != k for a in arrays):
        raise ValueError("every response needs ratings from the same annotators")
    if k < 2:
        raise ValueError(f"a split-half bound needs at least 2 annotators, got {k}")
    if trials < 1:
        raise ValueError("trials must be at least 1")
    rng = np.random.default_rng(seed)
    values = []
    splits = set()
    for _ in range(trials):
        order = rng.permutation(k)
        first, second = order[: k // 2], order[k // 2 :]
        splits.add(frozenset([frozenset(first.tolist()), frozenset(second.tolist())]))
        a = np.array([arr[:, first].mean() for arr in arrays])
        b = np.array([arr[:, second].mean() for arr in arrays])
        values.append(_coefficient(method, a, b)[0])
    v = np.array(values)
    finite = v[~np.isnan(v)]
    if not len(finite):
        raise ValueError("every split gave constant system scores: no correlation")
    return SplitHalf(
        method=method,
        mean=float(finite.mean()),
        std=float(finite.std()),
        min=float(finite.min()),
        max=float(finite.max()),
        trials=trials,
        distinct_splits=len(splits),
        annotators=k,
        values=tuple(float(x) for x in v),
    )
