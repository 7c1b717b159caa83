"""Selection accuracy and its bootstrap interval (pure numpy; no database)."""

from collections.abc import Sequence

import numpy as np

# A pair type's correctness is ranked (compared across systems) only from this many pairs: below
# it the 95 % interval is wider than about ±0.18 around 0.5, wider than the differences seen
# between systems (docs/pairs.md, "Reading pair correctness").
MIN_PAIRS_TO_RANK = 30
PAIR_CHANCE = 0.5  # a pair has two responses: picking one at random is right half the time
# Why ML pairs can fall as a model improves: what the pages say beside them.
ML_PAIRS_NOTE = (
    "ML pairs replace a content word with the word a bigram model finds most likely in its place: the "
    "better a model predicts fluent text, the more it may prefer that likely word, so its correctness on ML "
    "pairs can fall as it improves. Read them as a test of relying on context over local fluency, not as a "
    "score to maximise alone."
)


def bootstrap_interval(
    values: Sequence[float], *, resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (seeded: the same data give the same interval)."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return (float(low), float(high))


def accuracy_summary(correct: Sequence[bool], *, seed: int = 0) -> dict:
    n = len(correct)
    hits = int(sum(bool(c) for c in correct))
    low, high = bootstrap_interval([float(c) for c in correct], seed=seed)
    return {"questions": n, "correct": hits, "accuracy": hits / n if n else None, "ci95": [low, high] if n else None}


def chance_accuracy(candidates_per_question: Sequence[int]) -> float | None:
    """The accuracy of picking a candidate at random: the mean over questions of 1 / candidates."""
    sizes = [n for n in candidates_per_question if n > 0]
    return sum(1 / n for n in sizes) / len(sizes) if sizes else None


def paired_comparison(
    first: Sequence[bool], second: Sequence[bool], *, alpha: float = 0.05, power: float = 0.8
) -> dict:
    """Two systems' correctness on the same questions, compared by McNemar's exact test: only the
    questions one got right and the other wrong say which is better (a binomial test of those at 1/2).
    ``questions_needed``: how many questions a test set would need for the observed difference to be
    significant at ``alpha`` with probability ``power`` (Connor 1987), None when there is no difference."""
    from scipy.stats import binomtest

    if len(first) != len(second):
        raise ValueError(f"the systems answered {len(first)} and {len(second)} questions: compare the same questions")
    n = len(first)
    only_first = sum(1 for a, b in zip(first, second, strict=True) if a and not b)
    only_second = sum(1 for a, b in zip(first, second, strict=True) if b and not a)
    discordant = only_first + only_second
    p_value = binomtest(only_first, discordant, 0.5).pvalue if discordant else 1.0
    return {
        "questions": n,
        "only_first": only_first,
        "only_second": only_second,
        "difference": (only_first - only_second) / n if n else None,
        "p_value": float(p_value),
        "alpha": alpha,
        "significant": bool(p_value < alpha),
        "questions_needed": questions_needed(only_first, only_second, n, alpha=alpha, power=power),
    }


def questions_needed(
    only_first: int, only_second: int, n: int, *, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """Sample size of a paired (McNemar) comparison for the discordance observed on ``n`` questions."""
    import math

    from scipy.stats import norm

    if n == 0 or only_first == only_second:
        return None
    discordant = (only_first + only_second) / n
    difference = abs(only_first - only_second) / n
    z_alpha, z_power = norm.ppf(1 - alpha / 2), norm.ppf(power)
    root = z_alpha * math.sqrt(discordant) + z_power * math.sqrt(max(discordant - difference**2, 0.0))
    return math.ceil(root**2 / difference**2)
