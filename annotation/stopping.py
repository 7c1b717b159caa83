"""Probabilistic stopping: how likely the remaining planned scores of a response would change its
filter decision, under a Dirichlet-multinomial model of how a response's scores are drawn.

Each response has its own (unknown) distribution over the categories the filter rules look at
(for a false candidate: ungrammatical, acceptable, neither; for a ground truth: low, not low); that
distribution is Dirichlet with a prior fitted on the dataset's responses (stopped ones too: the
rule depends only on the scores seen), one for ground truths and one for false candidates. Given
the scores seen, the remaining ``planned - n`` scores are Dirichlet-multinomial; with K = 5 every
outcome is enumerated exactly. A response stops when its decision is final (the deterministic
rule, the floor) or when the probability that all K scores would decide otherwise than the most
likely decision is below the dataset's tolerance: tolerance 0 is exactly the deterministic rule.

Pure functions on counts (the selectors count scores in the database); numpy only.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from math import lgamma

import numpy as np

from annotation.rules import (
    FalseDecision,
    GroundTruthDecision,
    ScoreCounts,
    Thresholds,
    decide_false_candidate,
    decide_ground_truth,
)

# Below this many responses (with two or more scores) of a role the prior is not fitted: DEFAULT_ALPHA is used.
MIN_FIT_RESPONSES = 30
# Uniform Dirichlet(1, ..., 1): before any evidence every share of categories is equally likely, so
# three 1s of a false candidate still leave a one-in-six chance per remaining annotator of an
# acceptable score. Fitted priors are far more concentrated; this one stops later.
DEFAULT_ALPHA = 1.0


class Role:
    """How one kind of response is decided, over the categories its rule counts."""

    categories: int
    rules: Thresholds

    def __init__(self, rules: Thresholds):
        self.rules = rules

    def category(self, value: int) -> int:
        raise NotImplementedError

    def decide(self, counts: tuple[int, ...], planned: int):
        raise NotImplementedError

    def counts(self, values: Iterable[int]) -> tuple[int, ...]:
        out = [0] * self.categories
        for value in values:
            out[self.category(value)] += 1
        return tuple(out)


class FalseCandidateRole(Role):
    """Categories: 0 ungrammatical, 1 acceptable, 2 neither (the rules keep the two apart: an
    ungrammatical score is never an acceptable one)."""

    categories = 3

    def category(self, value: int) -> int:
        if value <= self.rules.ungrammatical_max_score:
            return 0
        return 1 if value >= self.rules.acceptable_min_score else 2

    def decide(self, counts: tuple[int, ...], planned: int) -> FalseDecision:
        ungrammatical, acceptable, other = counts
        return decide_false_candidate(
            ScoreCounts(ungrammatical + acceptable + other, acceptable, ungrammatical, 0), self.rules, planned
        )

    @staticmethod
    def from_score_counts(n: int, acceptable: int, ungrammatical: int) -> tuple[int, int, int]:
        return (ungrammatical, acceptable, n - acceptable - ungrammatical)


class GroundTruthRole(Role):
    """Categories: 0 low (the rule's ``ground_truth_low_max_score`` or less), 1 not low."""

    categories = 2

    def category(self, value: int) -> int:
        return 0 if value <= self.rules.ground_truth_low_max_score else 1

    def decide(self, counts: tuple[int, ...], planned: int) -> GroundTruthDecision:
        low, high = counts
        return decide_ground_truth(ScoreCounts(low + high, 0, 0, low), self.rules, planned)

    @staticmethod
    def from_score_counts(n: int, low: int) -> tuple[int, int]:
        return (low, n - low)


@dataclass(frozen=True, slots=True)
class Outlook:
    decision: str  # the decision all K scores would most likely give (final when decided)
    change: float  # probability that all K scores would give another decision
    decided: bool  # final by the deterministic rule: no score can change it

    def stops(self, tolerance: float) -> bool:
        return self.decided or self.change < tolerance


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    if parts == 1:
        yield (total,)
        return
    for first in range(total, -1, -1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


@lru_cache(maxsize=4096)
def _log_dm(draws: tuple[int, ...], alpha: tuple[float, ...]) -> float:
    """log P(category counts ``draws``) of a Dirichlet-multinomial with parameters ``alpha``."""
    m, a = sum(draws), sum(alpha)
    out = lgamma(m + 1) + lgamma(a) - lgamma(a + m)
    for x, al in zip(draws, alpha, strict=True):
        out += lgamma(x + al) - lgamma(al) - lgamma(x + 1)
    return out


def outlook(role: Role, seen: tuple[int, ...], *, planned: int, alpha: tuple[float, ...]) -> Outlook:
    """The decision of a response with category counts ``seen`` and how likely K scores change it."""
    now = role.decide(seen, planned)
    if now not in (FalseDecision.UNDECIDED, GroundTruthDecision.UNDECIDED):
        return Outlook(str(now), 0.0, True)
    remaining = planned - sum(seen)
    posterior = tuple(a + c for a, c in zip(alpha, seen, strict=True))
    chances: dict[str, float] = {}
    for draws in _compositions(remaining, role.categories):
        final = str(role.decide(tuple(c + d for c, d in zip(seen, draws, strict=True)), planned))
        chances[final] = chances.get(final, 0.0) + float(np.exp(_log_dm(draws, posterior)))
    decision = max(sorted(chances), key=chances.__getitem__)  # ties: alphabetical, reproducible
    return Outlook(decision, max(0.0, 1.0 - chances[decision] / sum(chances.values())), False)


def fit_alpha(counts: np.ndarray, *, weights: np.ndarray | None = None, iterations: int = 200) -> tuple[float, ...]:
    """Maximum-likelihood Dirichlet-multinomial parameters (Minka's fixed point) from responses'
    category counts (rows, any number of scores each; ``weights``: how many responses each row
    stands for). Fewer than MIN_FIT_RESPONSES responses with two or more scores (one score says
    nothing of the spread): the uniform default."""
    counts = np.asarray(counts, dtype=np.int64)
    categories = counts.shape[1] if counts.ndim == 2 else 0
    default = (DEFAULT_ALPHA,) * categories
    if counts.ndim != 2 or not len(counts):
        return default
    weights = np.ones(len(counts)) if weights is None else np.asarray(weights, dtype=np.float64)
    totals = counts.sum(axis=1)
    spread = totals >= 2
    counts, totals, weights = counts[spread], totals[spread], weights[spread]
    if weights.sum() < MIN_FIT_RESPONSES:
        return default
    # Integer counts: psi(x + a) - psi(a) = sum_{j<x} 1 / (a + j), with no special functions.
    steps = np.arange(int(totals.max()))
    alpha = np.maximum(np.average(counts, axis=0, weights=weights) / np.average(totals, weights=weights), 0.05)
    for _ in range(iterations):
        denominator = (np.cumsum(1.0 / (alpha.sum() + steps))[totals - 1] * weights).sum()
        numerator = np.empty_like(alpha)
        for k in range(categories):
            partial = np.concatenate([[0.0], np.cumsum(1.0 / (alpha[k] + steps))])
            numerator[k] = (partial[counts[:, k]] * weights).sum()
        updated = np.clip(alpha * numerator / denominator, 1e-3, 1e4)
        converged = np.allclose(updated, alpha, rtol=1e-7)
        alpha = updated
        if converged:
            break
    return tuple(round(float(a), 4) for a in alpha)


def outlook_table(role: Role, *, planned: int, alpha: tuple[float, ...]) -> dict[tuple[int, ...], Outlook]:
    """Every state a response can be in (category counts of fewer than ``planned`` scores) with its
    outlook: a lookup table for simulations and for scoring many responses at once."""
    return {
        seen: outlook(role, seen, planned=planned, alpha=alpha)
        for n in range(planned + 1)
        for seen in _compositions(n, role.categories)
    }
