"""Diversity of a system's responses: distinct-n (Li et al., NAACL 2016).

distinct-n = distinct n-grams / all n-grams, pooled over every response of the system, on the
tokens of :func:`evaluation.metrics.reference.tokenize` (lower-cased, split on whitespace), so that
it is comparable with the reference-based metrics. None when the responses hold no n-gram at all.
"""

from collections.abc import Iterable

from .reference import tokenize


def distinct_n(texts: Iterable[str], n: int) -> float | None:
    seen: set[tuple[str, ...]] = set()
    total = 0
    for text in texts:
        tokens = tokenize(text)
        grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
        seen.update(grams)
        total += len(grams)
    return len(seen) / total if total else None
