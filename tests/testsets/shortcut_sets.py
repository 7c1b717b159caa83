"""Small sets of pools built to carry one known shortcut each (or none), for the shortcut audit.

Every word has four letters, so a reply's length is fixed by its number of words: the sets control
which candidate is the longest exactly, and the style set's tokenisation (" , ", " ?", "I 'm": at
most 3 characters more) never changes which one is."""

import random

from testsets.shortcuts.pools import Pool

WORDS = "time good home walk city rain book card door fish gold hand idea jump kind lamp moon note park road".split()
CANDIDATES = 4


def _tokens(rng: random.Random, n_words: int) -> list[str]:
    words = [rng.choice(WORDS) for _ in range(n_words)]
    return ["I", "'m", *words[:2], ",", *words[2:], rng.choice(["?", "."])]


def plain(tokens: list[str]) -> str:
    """As most corpora write it: "I'm good home, walk city?"."""
    text = " ".join(tokens)
    for mark in (" ,", " ?", " .", " 'm"):
        text = text.replace(mark, mark[1:])
    return text


def tokenised(tokens: list[str]) -> str:
    """DailyDialog's style: "I 'm good home , walk city ?"."""
    return " ".join(tokens)


def _counts(rng: random.Random) -> list[int]:
    """Distinct word counts (so distinct lengths), one per candidate."""
    return rng.sample(range(3, 15), CANDIDATES)


def no_shortcut(n: int = 80, *, seed: int = 1) -> list[tuple[list[str], int]]:
    """Every candidate plain and drawn alike; the ground truth is one of them at random."""
    rng = random.Random(seed)
    return [([plain(_tokens(rng, k)) for k in _counts(rng)], rng.randrange(CANDIDATES)) for _ in range(n)]


def length_shortcut(n: int = 40, *, seed: int = 2) -> list[tuple[list[str], int]]:
    """The ground truth is always the longest reply."""
    rng = random.Random(seed)
    sets = []
    for _ in range(n):
        counts = sorted(_counts(rng))
        texts = [plain(_tokens(rng, k)) for k in counts]
        label = rng.randrange(CANDIDATES)
        texts[label], texts[-1] = texts[-1], texts[label]
        sets.append((texts, label))
    return sets


def style_shortcut(n: int = 80, *, seed: int = 3) -> list[tuple[list[str], int]]:
    """The ground truth alone is tokenised DailyDialog-style; lengths are as in no_shortcut."""
    rng = random.Random(seed)
    sets = []
    for _ in range(n):
        label = rng.randrange(CANDIDATES)
        tokens = [_tokens(rng, k) for k in _counts(rng)]
        sets.append(([tokenised(t) if i == label else plain(t) for i, t in enumerate(tokens)], label))
    return sets


def as_pools(sets: list[tuple[list[str], int]]) -> list[Pool]:
    return [Pool(i, tuple(texts), label) for i, (texts, label) in enumerate(sets)]


def skewed_length_pools(n: int = 200, *, seed: int = 4) -> list[tuple[str, list[str]]]:
    """Each question's ground truth and 12 false candidates of which 9 are shorter than it and 3
    longer: three drawn at random leave the ground truth the longest in 38 % of questions
    (C(9,3) / C(12,3)), yet every place for it is reachable."""
    rng = random.Random(seed)
    pools = []
    for _ in range(n):
        gt_words = rng.randrange(8, 11)
        shorter = [plain(_tokens(rng, rng.randrange(3, gt_words))) for _ in range(9)]
        longer = [plain(_tokens(rng, rng.randrange(gt_words + 1, gt_words + 6))) for _ in range(3)]
        false = shorter + longer
        rng.shuffle(false)
        pools.append((plain(_tokens(rng, gt_words)), false))
    return pools


def skewed_style_pools(n: int = 200, *, seed: int = 5) -> list[tuple[str, list[str]]]:
    """The ground truth tokenised DailyDialog-style; of its 12 false candidates 4 are too and 8 are
    plain; lengths drawn alike. Three drawn at random leave the ground truth the only tokenised
    reply in a quarter of questions and one of two in half."""
    rng = random.Random(seed)
    pools = []
    for _ in range(n):
        false = [tokenised(_tokens(rng, rng.randrange(3, 15))) for _ in range(4)]
        false += [plain(_tokens(rng, rng.randrange(3, 15))) for _ in range(8)]
        rng.shuffle(false)
        pools.append((tokenised(_tokens(rng, rng.randrange(3, 15))), false))
    return pools
