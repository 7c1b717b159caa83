"""A smoothed bigram language model of a repository of utterances, for content-word pairs.

Interpolated Kneser–Ney on counts held in numpy arrays. Kneser–Ney rather than plain absolute
discounting because the lower order is asked "how many different words precede w", which keeps
words that occur often in one fixed phrase ("Hong Kong") from looking likely after anything.
nltk.lm implements the same estimate but walks Python objects per query; the equally-likely and
most-likely criteria score every noun of the vocabulary (20k+) per response, so rows and columns
of the count table are looked up here with vectorised binary searches instead.

    P(w | v)  = max(c(v w) - D, 0) / c(v) + D * N1+(v •) / c(v) * P_low(w)
    P_low(w)  = max(N1+(• w) - D, 0) / N1+(• •) + D * T / N1+(• •) / |V|

V is the predicted vocabulary (the words seen, ``</s>`` and ``<unk>``), T the number of words with
N1+(• w) > 0. The uniform term of P_low gives ``<unk>`` (any unseen word) its small mass and keeps
every probability above zero; both orders sum to one over V. A history never seen (``<unk>``)
falls back to P_low. Tokens are those of :func:`pairs.text.tokens`, lower-cased, punctuation kept
(``the car .`` is evidence for ``.`` after ``car``), typographic apostrophes folded to ``'``.

Besides the bigrams the model keeps, per word, how often it stands inside a sentence and how often
it is capitalised there: :meth:`BigramLM.capitalised_share` tells names ("Tom", "Bill", "Sunday")
from nouns, which WordNet cannot (it lists "tom", "bill" and "john" as nouns).
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from pairs.text import tokens

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
_SPECIALS = (BOS, EOS, UNK)
_FORMAT_VERSION = 1
SENTENCE_OPENERS = frozenset('.?!"“‘')  # a token after one of these starts a sentence
_CHUNK_PAIRS = 2_000_000  # bigram codes are reduced to (code, count) every so many, to bound memory


def normalise(token: str) -> str:
    return token.lower().replace("’", "'")


class BigramLM:
    """Counts and the Kneser–Ney estimate; build with :meth:`fit` or :meth:`load`."""

    def __init__(
        self,
        vocabulary: Sequence[str],
        codes: np.ndarray,
        counts: np.ndarray,
        discount: float,
        *,
        inside: np.ndarray | None = None,
        capitalised: np.ndarray | None = None,
    ):
        if not 0 < discount < 1:
            raise ValueError("discount must be in (0, 1)")
        self.vocabulary = list(vocabulary)
        if tuple(self.vocabulary[:3]) != _SPECIALS:
            raise ValueError(f"the vocabulary must start with {_SPECIALS}")
        self.discount = float(discount)
        self._ids = {word: i for i, word in enumerate(self.vocabulary)}
        n = len(self.vocabulary)
        self._inside = np.zeros(n, np.int64) if inside is None else np.asarray(inside, dtype=np.int64)
        self._capitalised = np.zeros(n, np.int64) if capitalised is None else np.asarray(capitalised, dtype=np.int64)
        if len(self._inside) != n or len(self._capitalised) != n:
            raise ValueError("inside and capitalised counts must have one entry per vocabulary word")
        order = np.argsort(codes, kind="stable")
        self._codes = np.asarray(codes, dtype=np.int64)[order]
        self._counts = np.asarray(counts, dtype=np.int64)[order]
        previous, following = np.divmod(self._codes, n)

        # Rows (previous word): codes are sorted by previous then next, a CSR layout as is.
        self._row_ptr = np.searchsorted(previous, np.arange(n + 1))
        self._row_next = following
        # Columns (next word): the same pairs sorted by next then previous.
        by_column = np.lexsort((previous, following))
        self._col_ptr = np.searchsorted(following[by_column], np.arange(n + 1))
        self._col_previous = previous[by_column]
        self._col_counts = self._counts[by_column]

        self._history = np.bincount(previous, weights=self._counts, minlength=n)
        self._followers = np.bincount(previous, minlength=n).astype(np.float64)  # N1+(v •)
        self._unigram = np.bincount(following, weights=self._counts, minlength=n).astype(np.int64)
        predecessors = np.bincount(following, minlength=n).astype(np.float64)  # N1+(• w)
        total_types = predecessors.sum()  # N1+(• •)
        predicted = np.ones(n, dtype=bool)
        predicted[0] = False  # <s> is never predicted
        low = np.zeros(n)
        if total_types > 0:
            seen = int(np.count_nonzero(predecessors))
            low[predicted] = np.maximum(predecessors[predicted] - self.discount, 0) / total_types
            low[predicted] += self.discount * seen / total_types / predicted.sum()
        else:
            low[predicted] = 1 / predicted.sum()
        self._low = low

    # ----------------------------------------------------------------------------- building
    @classmethod
    def fit(cls, texts: Iterable[str], *, discount: float = 0.75) -> BigramLM:
        """Count the bigrams of ``<s> tokens </s>`` per utterance; empty utterances are skipped."""
        ids: dict[str, int] = {word: i for i, word in enumerate(_SPECIALS)}
        inside = [0, 0, 0]  # occurrences not starting a sentence, per id
        capitalised = [0, 0, 0]  # of which capitalised
        pending = array("q")
        reduced: list[tuple[np.ndarray, np.ndarray]] = []
        # Codes use a fixed large base while the vocabulary grows; re-based after sorting.
        base = 1 << 31
        for text in texts:
            toks = tokens(text)
            if not toks:
                continue
            sequence = [0]
            for i, token in enumerate(toks):
                word_id = ids.setdefault(normalise(token.text), len(ids))
                if word_id == len(inside):
                    inside.append(0)
                    capitalised.append(0)
                if i > 0 and toks[i - 1].text not in SENTENCE_OPENERS:
                    inside[word_id] += 1
                    capitalised[word_id] += token.text[0].isupper()
                sequence.append(word_id)
            sequence.append(1)
            pending.extend(a * base + b for a, b in zip(sequence, sequence[1:], strict=False))
            if len(pending) >= _CHUNK_PAIRS:
                reduced.append(np.unique(np.frombuffer(pending, dtype=np.int64), return_counts=True))
                pending = array("q")
        reduced.append(np.unique(np.frombuffer(pending, dtype=np.int64), return_counts=True))
        all_codes = np.concatenate([codes for codes, _ in reduced])
        all_counts = np.concatenate([counts for _, counts in reduced])
        codes, inverse = np.unique(all_codes, return_inverse=True)
        counts = np.bincount(inverse, weights=all_counts).astype(np.int64)

        # Sorted vocabulary (specials first) so that the same texts give the same ids and digest.
        words = sorted(word for word in ids if word not in _SPECIALS)
        vocabulary = [*_SPECIALS, *words]
        new_id = np.empty(len(ids), dtype=np.int64)
        position = {word: i for i, word in enumerate(vocabulary)}
        for word, old in ids.items():
            new_id[old] = position[word]
        previous, following = np.divmod(codes, base)
        remapped = new_id[previous] * len(vocabulary) + new_id[following]
        inside_by_word = np.zeros(len(vocabulary), np.int64)
        inside_by_word[new_id] = inside
        capitalised_by_word = np.zeros(len(vocabulary), np.int64)
        capitalised_by_word[new_id] = capitalised
        return cls(vocabulary, remapped, counts, discount, inside=inside_by_word, capitalised=capitalised_by_word)

    # ----------------------------------------------------------------------------- lookups
    def __len__(self) -> int:
        return len(self.vocabulary)

    def id(self, word: str) -> int:
        """The word's id (normalised as the training tokens were); ``<unk>``'s for an unseen word."""
        if word in _SPECIALS:
            return self._ids[word]
        return self._ids.get(normalise(word), 2)

    def ids(self, words: Iterable[str]) -> np.ndarray:
        return np.fromiter((self.id(word) for word in words), dtype=np.int64)

    def count(self, word: str) -> int:
        """Occurrences of the word in the repository (``<s>``: the number of utterances)."""
        i = self.id(word)
        if i == 0:
            return int(self._history[0])
        return 0 if i == 2 else int(self._unigram[i])

    def counts(self, ids: np.ndarray) -> np.ndarray:
        return self._unigram[np.asarray(ids, dtype=np.int64)]

    def capitalised_share(self, word: str) -> float:
        """Of the word's occurrences inside a sentence, the share written capitalised (0 if none)."""
        i = self.id(word)
        inside = self._inside[i]
        return float(self._capitalised[i] / inside) if inside else 0.0

    def prob(self, word: str, previous: str) -> float:
        return float(self.prob_next_many(previous, np.array([self.id(word)]))[0])

    def log_prob(self, word: str, previous: str) -> float:
        return float(np.log(self.prob(word, previous)))

    def prob_next_many(self, previous: str | int, candidate_ids: np.ndarray) -> np.ndarray:
        """P(c | previous) for every id c of ``candidate_ids``."""
        p = previous if isinstance(previous, (int, np.integer)) else self.id(previous)
        candidates = np.asarray(candidate_ids, dtype=np.int64)
        start, end = self._row_ptr[p], self._row_ptr[p + 1]
        pair_counts = _lookup(self._row_next[start:end], self._counts[start:end], candidates)
        return self._interpolate(pair_counts, np.full(len(candidates), p), self._low[candidates])

    def prob_many_given(self, word: str | int, previous_ids: np.ndarray) -> np.ndarray:
        """P(word | p) for every id p of ``previous_ids``."""
        w = word if isinstance(word, (int, np.integer)) else self.id(word)
        histories = np.asarray(previous_ids, dtype=np.int64)
        start, end = self._col_ptr[w], self._col_ptr[w + 1]
        pair_counts = _lookup(self._col_previous[start:end], self._col_counts[start:end], histories)
        return self._interpolate(pair_counts, histories, np.full(len(histories), self._low[w]))

    def _interpolate(self, pair_counts: np.ndarray, histories: np.ndarray, low: np.ndarray) -> np.ndarray:
        history = self._history[histories]
        seen = history > 0
        safe = np.where(seen, history, 1.0)
        higher = np.maximum(pair_counts - self.discount, 0) / safe
        weight = self.discount * self._followers[histories] / safe
        return np.where(seen, higher + weight * low, low)

    # ----------------------------------------------------------------------------- provenance
    def digest(self) -> str:
        """sha256 of the discount, the vocabulary and the bigram counts."""
        h = hashlib.sha256()
        h.update(f"bigram-kn/{_FORMAT_VERSION}/{self.discount!r}\n".encode())
        h.update("\n".join(self.vocabulary).encode("utf-8"))
        h.update(self._codes.astype("<i8").tobytes())
        h.update(self._counts.astype("<i8").tobytes())
        h.update(self._inside.astype("<i8").tobytes())
        h.update(self._capitalised.astype("<i8").tobytes())
        return h.hexdigest()

    def save(self, path: str | Path) -> None:
        np.savez_compressed(
            path,
            format_version=np.array(_FORMAT_VERSION),
            discount=np.array(self.discount),
            vocabulary=np.array(self.vocabulary, dtype=str),
            codes=self._codes,
            counts=self._counts,
            inside=self._inside,
            capitalised=self._capitalised,
        )

    @classmethod
    def load(cls, path: str | Path) -> BigramLM:
        with np.load(path, allow_pickle=False) as data:
            if int(data["format_version"]) != _FORMAT_VERSION:
                raise ValueError(f"unsupported bigram model format {int(data['format_version'])}")
            return cls(
                data["vocabulary"].tolist(),
                data["codes"],
                data["counts"],
                float(data["discount"]),
                inside=data["inside"],
                capitalised=data["capitalised"],
            )


def _lookup(keys: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """values[k] where keys[k] == query, else 0; ``keys`` sorted."""
    if len(keys) == 0:
        return np.zeros(len(queries))
    at = np.minimum(np.searchsorted(keys, queries), len(keys) - 1)
    return np.where(keys[at] == queries, values[at], 0).astype(np.float64)
