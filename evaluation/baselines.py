"""Baselines of response selection: TF-IDF selection and RANDOM false candidates.

* :class:`TfidfSelector` (Lowe et al. 2015): IDF is fitted on a repository of utterances, streamed
  once (``idf(w) = log(N / df(w))``, N utterances, df the number holding ``w``); an utterance's vector
  is ``tf(w) * idf(w)`` with raw term counts, L2-normalised. The selected candidate is the one whose
  vector has the highest cosine with the context's (the context turns joined). Words the repository
  never saw weigh 0; ties go to the first candidate, so a question where nothing overlaps selects
  candidate 0 (put the ground truth at a random position, as :func:`random_trials` does).
* :func:`random_trials`: the RANDOM test sets of Sato et al. (2020), k false candidates per question
  drawn uniformly from the repository, N seeded trials. Trial ``t`` uses the generator seeded with
  ``(seed, t)``: the same trial whatever N, the same sets for the same seed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy is imported where it is used: it costs every process ~0.4 s to start
    from scipy import sparse


def tokenize(text: str) -> list[str]:
    return text.lower().split()


class TfidfSelector:
    def __init__(self, vocabulary: dict[str, int], idf: np.ndarray, documents: int):
        self.vocabulary = vocabulary
        self.idf = idf
        self.documents = documents

    @classmethod
    def fit(cls, utterances: Iterable[str]) -> TfidfSelector:
        """Fit IDF on a repository of utterances, read once as a stream."""
        df: Counter[str] = Counter()
        n = 0
        for utterance in utterances:
            df.update(set(tokenize(utterance)))
            n += 1
        if n == 0:
            raise ValueError("the repository has no utterances: IDF cannot be fitted")
        vocabulary = {word: i for i, word in enumerate(sorted(df))}
        idf = np.zeros(len(vocabulary))
        for word, count in df.items():
            idf[vocabulary[word]] = math.log(n / count)
        return cls(vocabulary, idf, n)

    def vectorize(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """L2-normalised TF-IDF rows, one per text (an all-zero row for a text of unknown words)."""
        from scipy import sparse

        rows, cols, vals = [], [], []
        for row, text in enumerate(texts):
            counts = Counter(w for w in tokenize(text) if w in self.vocabulary)
            for word, tf in counts.items():
                col = self.vocabulary[word]
                weight = tf * self.idf[col]
                if weight:
                    rows.append(row)
                    cols.append(col)
                    vals.append(weight)
        matrix = sparse.csr_matrix((vals, (rows, cols)), shape=(len(texts), len(self.vocabulary)))
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sparse.csr_matrix(sparse.diags(1.0 / norms) @ matrix)

    def scores(self, context: str | Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """Cosine between the context and each candidate."""
        text = context if isinstance(context, str) else " ".join(context)
        vectors = self.vectorize([text, *candidates])
        return np.asarray((vectors[1:] @ vectors[0].T).todense()).ravel()

    def select(self, context: str | Sequence[str], candidates: Sequence[str]) -> int:
        """Index of the candidate with the highest cosine (the first one on ties)."""
        if not candidates:
            raise ValueError("no candidates to select from")
        return int(np.argmax(self.scores(context, candidates)))

    def select_all(self, questions: Sequence[TrialQuestion]) -> list[int]:
        """:meth:`select` for many questions at once (one sparse product for the whole set)."""
        if not questions:
            return []
        contexts = self.vectorize([" ".join(q.context) for q in questions])
        flat = [c for q in questions for c in q.candidates]
        owner = np.repeat(np.arange(len(questions)), [len(q.candidates) for q in questions])
        if not all(q.candidates for q in questions):
            raise ValueError("a question has no candidates")
        cosines = np.asarray(self.vectorize(flat).multiply(contexts[owner]).sum(axis=1)).ravel()
        chosen, start = [], 0
        for q in questions:
            chosen.append(int(np.argmax(cosines[start : start + len(q.candidates)])))
            start += len(q.candidates)
        return chosen

    def accuracy(self, questions: Iterable[TrialQuestion]) -> float:
        """Share of questions where the selected candidate is the ground truth."""
        questions = list(questions)
        if not questions:
            raise ValueError("no questions")
        chosen = self.select_all(questions)
        return sum(c == q.answer_index for c, q in zip(chosen, questions, strict=True)) / len(questions)


@dataclass(frozen=True)
class Question:
    id: str
    context: tuple[str, ...]
    ground_truth: str


@dataclass(frozen=True)
class TrialQuestion:
    question_id: str
    context: tuple[str, ...]
    candidates: tuple[str, ...]  # the ground truth and k false candidates, shuffled
    answer_index: int  # position of the ground truth in candidates

    @property
    def ground_truth(self) -> str:
        return self.candidates[self.answer_index]

    @property
    def false_candidates(self) -> tuple[str, ...]:
        return tuple(c for i, c in enumerate(self.candidates) if i != self.answer_index)


def random_trial(
    questions: Sequence[Question], repository: Sequence[str], *, k: int = 3, seed: int = 0, trial: int = 0
) -> list[TrialQuestion]:
    """One RANDOM test set: k false candidates per question drawn uniformly from the repository.

    A draw that repeats the ground truth, a context turn or another drawn candidate (by text) is
    drawn again.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    if not repository:
        raise ValueError("the repository is empty")
    rng = np.random.default_rng([seed, trial])
    out = []
    for question in questions:
        taken = {question.ground_truth.strip(), *(turn.strip() for turn in question.context)}
        false: list[str] = []
        attempts = 0
        while len(false) < k:
            attempts += 1
            if attempts > 100 * k + 1000:
                raise ValueError(
                    f"question {question.id!r}: the repository has fewer than {k} utterances that differ "
                    "from its ground truth and context"
                )
            text = repository[int(rng.integers(len(repository)))]
            if text.strip() in taken:
                continue
            taken.add(text.strip())
            false.append(text)
        answer = int(rng.integers(k + 1))
        candidates = false[:answer] + [question.ground_truth] + false[answer:]
        out.append(TrialQuestion(question.id, tuple(question.context), tuple(candidates), answer))
    return out


def random_trials(
    questions: Sequence[Question], repository: Sequence[str], *, k: int = 3, trials: int = 100, seed: int = 0
) -> list[list[TrialQuestion]]:
    """N RANDOM test sets (one question list per trial), deterministic for a seed."""
    if trials < 1:
        raise ValueError("trials must be at least 1")
    return [random_trial(questions, repository, k=k, seed=seed, trial=t) for t in range(trials)]


class TfidfBaseline:
    """The TF-IDF selector as a plugin system (``register_system NAME --kind plugin --plugin
    evaluation.baselines.TfidfBaseline``): loss = 1 - cosine, so the lowest loss is the selection.

    Its IDF is fitted on the repository file named by the system's checkpoint field (one utterance
    per line, streamed once per worker), as Lowe et al. fit it on the training utterances; with no
    file it falls back to the texts of each call (the contexts and candidates being scored).
    """

    def __init__(self, system=None) -> None:
        self.repository = getattr(system, "checkpoint", "") or ""
        self._selector: TfidfSelector | None = None

    def _fitted(self, batch_texts: list[str]) -> TfidfSelector:
        if not self.repository:
            return TfidfSelector.fit(batch_texts)
        if self._selector is None:
            with open(self.repository, encoding="utf-8") as lines:
                self._selector = TfidfSelector.fit(line.strip() for line in lines if line.strip())
        return self._selector

    def losses(self, contexts: list[list[str]], candidates: list[list[str]]) -> list[list[float]]:
        texts = [" ".join(turns) for turns in contexts] + [c for cands in candidates for c in cands]
        selector = self._fitted(texts)
        return [
            [1.0 - float(cosine) for cosine in selector.scores(turns, cands)]
            for turns, cands in zip(contexts, candidates, strict=True)
        ]
