"""Accuracy of a baseline over questions: a Wilson score interval and chance."""

import math
from collections.abc import Sequence

Z_95 = 1.959963984540054


def wilson_interval(successes: float, n: int, *, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (successes may be fractional: a tie shared by k
    candidates counts 1/k). Better than the normal interval near 0 and 1, where shortcuts live."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / denominator
    # at 0 or n successes the bound on that side is exactly 0 or 1 (rounding would miss it)
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return (low, high)


def chance_accuracy(sizes: Sequence[int]) -> float:
    """Expected accuracy of a uniform random pick: the mean over questions of 1 / candidates."""
    return sum(1 / n for n in sizes) / len(sizes) if sizes else 0.0


def credit(scores: Sequence[float], label: int) -> float:
    """A question's credit when the highest score is picked: 1 / (candidates tied for the highest)
    if the ground truth is among them, else 0 (a rule that cannot decide is not rewarded)."""
    best = max(scores)
    tied = [i for i, s in enumerate(scores) if s == best]
    return 1 / len(tied) if label in tied else 0.0
