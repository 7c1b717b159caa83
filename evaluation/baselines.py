"""Baseline systems, registered as plugins (``register_system NAME --kind plugin --plugin ...``)."""

import math
import re
from collections import Counter

_WORD = re.compile(r"\w+")


class TfidfBaseline:
    """Selects the candidate whose TF-IDF vector is closest to the context's (no model at all).

    loss = 1 - cosine(tf-idf(context), tf-idf(candidate)). The IDF is computed over the texts of
    each call (the contexts and candidates of the batch being scored, e.g. a job's committed batch
    of questions), with add-one smoothing: idf(w) = log((1 + N) / (1 + df(w))) + 1.
    """

    def __init__(self, system=None) -> None:
        self.system = system

    def losses(self, contexts: list[list[str]], candidates: list[list[str]]) -> list[list[float]]:
        context_bags = [Counter(_words(" ".join(turns))) for turns in contexts]
        candidate_bags = [[Counter(_words(c)) for c in cands] for cands in candidates]
        documents = [*context_bags, *(bag for bags in candidate_bags for bag in bags)]
        df = Counter(word for bag in documents for word in bag)
        idf = {word: math.log((1 + len(documents)) / (1 + n)) + 1 for word, n in df.items()}
        results = []
        for context, bags in zip(context_bags, candidate_bags, strict=True):
            query = _weights(context, idf)
            results.append([1.0 - _cosine(query, _weights(bag, idf)) for bag in bags])
        return results


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _weights(bag: Counter, idf: dict[str, float]) -> dict[str, float]:
    return {word: count * idf[word] for word, count in bag.items()}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    dot = sum(value * b.get(word, 0.0) for word, value in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0
