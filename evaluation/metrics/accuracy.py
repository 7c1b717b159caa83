"""Selection accuracy and its bootstrap interval (pure numpy; no database)."""

from collections.abc import Sequence

import numpy as np


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
