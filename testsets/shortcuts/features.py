"""Surface features of every candidate, computed without the context, set-wise (numpy, sparse
matrices): what a context-free classifier may learn to tell the ground truth by. scipy and
scikit-learn are imported where they are used: the admin imports this module at start-up.

Each base feature also enters relative to its question (minus the question's mean), and the
lengths as a rank and a z-score within the question: a pick is made among one question's
candidates, so what counts is how a candidate differs from its neighbours.
"""

import string
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.text import SPACED_PUNCTUATION, SPLIT_CLITIC

from .pools import Pool

WORD = r"(?u)\b\w+\b"
PUNCTUATION = frozenset(string.punctuation)


@dataclass
class CandidateTable:
    """Every candidate of the audited pools, flat: its text, its question (0-based index) and
    whether it is the ground truth; ``features`` one row per candidate, columns ``names``."""

    pools: Sequence[Pool]
    texts: list[str]
    groups: np.ndarray
    y: np.ndarray
    sizes: np.ndarray  # candidates per question
    names: list[str] = field(default_factory=list)
    features: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def n_questions(self) -> int:
        return len(self.pools)

    def column(self, name: str) -> np.ndarray:
        return self.features[:, self.names.index(name)]


def candidate_table(pools: Sequence[Pool]) -> CandidateTable:
    texts = [text for pool in pools for text in pool.texts]
    sizes = np.array([len(pool.texts) for pool in pools], dtype=np.int64)
    groups = np.repeat(np.arange(len(pools)), sizes)
    y = np.zeros(len(texts), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    y[starts + np.array([pool.label for pool in pools], dtype=np.int64)] = 1
    table = CandidateTable(pools=pools, texts=texts, groups=groups, y=y, sizes=sizes)
    base = base_features(texts)
    base["similarity"] = similarity_to_others(texts, groups, sizes)
    columns = dict(base)
    for name in ("chars", "tokens"):
        columns[f"{name}_rank"] = _rank_in_group(base[name], groups, sizes)
        columns[f"{name}_z"] = _z_in_group(base[name], groups, sizes)
    for name, values in base.items():
        columns[f"{name}_vs_question"] = values - _group_mean(values, groups, sizes)[groups]
    table.names = list(columns)
    table.features = np.column_stack([columns[name] for name in table.names]).astype(np.float64)
    return table


def base_features(texts: list[str]) -> dict[str, np.ndarray]:
    rows = [_text_features(text) for text in texts]
    names = list(rows[0]) if rows else []
    base = {name: np.array([row[name] for row in rows], dtype=np.float64) for name in names}
    rarity_mean, rarity_max = _rarity(texts)
    base["rarity_mean"], base["rarity_max"] = rarity_mean, rarity_max
    return base


def _text_features(text: str) -> dict[str, float]:
    chars = len(text)
    letters = [c for c in text if c.isalpha()]
    lower = sum(c.islower() for c in letters)
    punctuation = sum(c in PUNCTUATION for c in text)
    stripped = text.strip()
    return {
        "chars": chars,
        "tokens": len(text.split()),
        "punctuation": punctuation,
        "punctuation_rate": punctuation / chars if chars else 0.0,
        "question_marks": text.count("?"),
        "exclamation_marks": text.count("!"),
        "spaced_punctuation": len(SPACED_PUNCTUATION.findall(text)),
        "split_clitics": len(SPLIT_CLITIC.findall(text)),
        "ends_with_punctuation": float(bool(stripped) and stripped[-1] in PUNCTUATION),
        "initial_capital": float(stripped[:1].isupper()),
        "lower_ratio": lower / len(letters) if letters else 0.0,
        "all_lower": float(bool(letters) and lower == len(letters)),
    }


def _words(texts: list[str]):
    """Candidates x words (lower-cased), 0/1; None when no candidate has a word."""
    from sklearn.feature_extraction.text import CountVectorizer

    try:
        return CountVectorizer(token_pattern=WORD, binary=True, dtype=np.float64).fit_transform(texts).tocsr()
    except ValueError:  # an empty vocabulary
        return None


def _rarity(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and maximum log inverse document frequency of a candidate's words, over the audited
    candidates: a ground truth from another corpus than its false candidates uses other words."""
    words = _words(texts)
    if words is None:
        return np.zeros(len(texts)), np.zeros(len(texts))
    df = np.asarray(words.sum(axis=0)).ravel()
    idf = np.log(len(texts) / df)
    weighted = words.multiply(idf).tocsr()
    n_words = np.asarray(words.sum(axis=1)).ravel()
    mean = np.divide(np.asarray(weighted.sum(axis=1)).ravel(), n_words, out=np.zeros(len(texts)), where=n_words > 0)
    return mean, weighted.max(axis=1).toarray().ravel()


def similarity_to_others(texts: list[str], groups: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Mean TF-IDF cosine of each candidate to the other candidates of its question: (x . sum of
    the question's rows - x . x) / (k - 1), all questions in two sparse products."""
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        x = TfidfVectorizer(token_pattern=WORD).fit_transform(texts).tocsr()
    except ValueError:
        return np.zeros(len(texts))
    indicator = sparse.csr_matrix(
        (np.ones(len(texts)), (groups, np.arange(len(texts)))), shape=(len(sizes), len(texts))
    )
    sums = (indicator @ x).tocsr()
    dot = np.asarray(x.multiply(sums[groups]).sum(axis=1)).ravel()
    own = np.asarray(x.multiply(x).sum(axis=1)).ravel()
    others = np.maximum(sizes[groups] - 1, 1)
    return (dot - own) / others


def _group_mean(values: np.ndarray, groups: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    return np.bincount(groups, weights=values, minlength=len(sizes)) / np.maximum(sizes, 1)


def _z_in_group(values: np.ndarray, groups: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    mean = _group_mean(values, groups, sizes)
    var = _group_mean(values * values, groups, sizes) - mean * mean
    std = np.sqrt(np.maximum(var, 0.0))[groups]
    return np.divide(values - mean[groups], std, out=np.zeros(len(values)), where=std > 1e-12)


def _rank_in_group(values: np.ndarray, groups: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """How many candidates of the question are shorter, over (k - 1): 0 for the shortest, 1 for the
    longest; ties share the lower rank."""
    order = np.lexsort((values, groups))
    g, v = groups[order], values[order]
    position = np.arange(len(order))
    group_start = np.concatenate([[0], np.cumsum(sizes)[:-1]])[g]
    new_run = np.ones(len(order), dtype=bool)
    new_run[1:] = (g[1:] != g[:-1]) | (v[1:] != v[:-1])
    run_start = np.maximum.accumulate(np.where(new_run, position, 0))
    ranks = np.empty(len(order), dtype=np.float64)
    ranks[order] = (run_start - group_start) / np.maximum(sizes[g] - 1, 1)
    return ranks
