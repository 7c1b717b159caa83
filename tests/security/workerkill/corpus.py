"""Deterministic synthetic text, large enough that a worker is killed in the middle of a job."""

import random

WORDS = """time person year way day thing man world life hand part child eye woman place work week
case point company number group problem fact say get make go know take see come think look want
give use find tell ask seem feel try leave call good new first last long great little own other old
right big high different small large next early young important few public bad same able coffee
train ticket museum library sister weather boxes jacket dinner morning platform noon sale tonight
river garden window letter doctor teacher kitchen market summer winter mountain bridge street city
village bottle pencil camera guitar bicycle sandwich umbrella holiday office meeting airport hotel
breakfast lunch station taxi paper music movie picture story answer question friend brother mother
father neighbour student lesson exam birthday party present card phone computer email""".split()


def sentences(count: int, *, seed: int) -> list[str]:
    """``count`` different sentences of 5 to 11 words (different after normalisation too)."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        words = [rng.choice(WORDS) for _ in range(rng.randint(5, 11))]
        key = " ".join(words)
        if key not in seen:
            seen.add(key)
            out.append(key.capitalize() + rng.choice([" .", " ?", " !"]))
    return out
