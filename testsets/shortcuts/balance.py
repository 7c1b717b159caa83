"""Shortcut-aware choice of each question's false candidates, among those the human filter rules
kept: the ground truth should not stand out from them by the candidates alone.

Four cues are balanced per question:
- length: the ground truth's place among its question's candidates ordered by length is drawn
  uniformly at random (seeded), and false candidates are chosen to put it there, so that "the
  longest reply" and "the shortest reply" pick it at chance;
- similarity to the other candidates: false candidates retrieved around the ground truth are each
  like it more than like each other, so the ground truth sits in their middle; its place among the
  candidates ordered by mean TF-IDF cosine to the others is drawn and met the same way;
- style: false candidates that share the ground truth's marks of style (tokenised or not, final
  punctuation, initial capital) are preferred, each mark not shared costing as much as a place
  missed;
- everything a surface classifier learns (adversarial filtering, Zellers et al. 2018; Le Bras et
  al. 2020): a logistic regression on the candidates' surface features is trained on the current
  choice (out of fold: a question is scored by a model that never saw it), and the choice is
  redone so that the ground truth's place among the classifier's scores is also drawn uniformly;
  repeated for ``rounds``. False candidates the classifier tells apart most easily are the ones
  left out.

A question is *balanced* when both places were met. Questions with exactly ``k`` kept false
candidates have no choice; they count as balanced only if their one choice meets the targets.
Pure function of the texts, the options and the seed (the build stores it; bench/ measures it).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from .features import base_features, similarity_to_others

# A question with many kept false candidates: only the first ones (in the caller's order of
# preference) are considered, so the subsets tried stay few (C(12, 3) = 220).
MAX_CONSIDERED = 12
_LENGTH_TIE_BREAK = 1e-3  # among equally balanced choices: the one closest to the ground truth in length
SIMILARITY_MARGIN_WEIGHT = 5.0
_BLOCK = 2000  # questions whose subsets are weighed at once (bounds the (q, s, k, k) array)


@dataclass(frozen=True)
class BalanceOptions:
    rounds: int = 3  # adversarial filtering rounds (0: balance length only)
    seed: int = 0
    folds: int = 5
    drop_unbalanced: bool = False  # leave out the questions whose ground truth could not be balanced

    def describe(self) -> dict:
        return {
            "rounds": self.rounds,
            "seed": self.seed,
            "folds": self.folds,
            "drop_unbalanced": self.drop_unbalanced,
            "method": "rank-balanced",
            "version": 1,
        }


@dataclass(frozen=True, slots=True)
class ChoicePool:
    """A question's ground truth and its kept false candidates, in the caller's order of preference."""

    question_id: int
    ground_truth: str
    false_ids: tuple[int, ...]
    false_texts: tuple[str, ...]


@dataclass
class BalanceResult:
    chosen: dict[int, tuple[int, ...]]  # question id -> its k false candidates
    questions: int = 0
    unbalanced: int = 0  # questions whose chosen candidates leave the ground truth off its target place
    unbalanced_length: int = 0
    unbalanced_classifier: int = 0
    unbalanced_similarity: int = 0
    too_few: int = 0  # questions with fewer than k kept false candidates (not chosen for)
    unbalanced_ids: frozenset[int] = frozenset()
    rounds: list[dict] = field(default_factory=list)  # per round: the classifier's accuracy before it

    def report(self, options: BalanceOptions) -> dict:
        return {
            **options.describe(),
            "questions": self.questions,
            "unbalanced": self.unbalanced,
            "unbalanced_length": self.unbalanced_length,
            "unbalanced_classifier": self.unbalanced_classifier,
            "unbalanced_similarity": self.unbalanced_similarity,
            "too_few_false": self.too_few,
            "classifier_accuracy_by_round": [r["accuracy"] for r in self.rounds],
        }

    def preference(self, pool: ChoicePool) -> list[int]:
        """The pool's false candidates with the chosen ones first (the others keep their order)."""
        chosen = self.chosen.get(pool.question_id, ())
        return [*chosen, *(i for i in pool.false_ids if i not in set(chosen))]


def balanced_choice(pools: Sequence[ChoicePool], *, k: int, options: BalanceOptions) -> BalanceResult:
    usable = [p for p in pools if len(p.false_ids) >= k]
    result = BalanceResult(chosen={}, questions=len(usable), too_few=len(pools) - len(usable))
    if not usable:
        return result
    table = _Table(usable, k=k)
    rng = np.random.default_rng(options.seed)
    target_length = rng.integers(0, k + 1, size=len(usable))
    target_score = rng.integers(0, k + 1, size=len(usable))
    target_similarity = rng.integers(0, k + 1, size=len(usable))
    targets = (target_length, target_score, target_similarity)
    scores = np.zeros(len(table.texts))  # no classifier yet: length and similarity only
    choice = table.choose(scores, targets, classifier=False)
    for _ in range(options.rounds):
        scores, accuracy = table.classifier_scores(choice, options)
        result.rounds.append({"accuracy": round(accuracy, 4)})
        choice = table.choose(scores, targets, classifier=True)
    result.chosen = {
        pool.question_id: tuple(pool.false_ids[i] for i in chosen)
        for pool, chosen in zip(usable, choice.chosen, strict=True)
    }
    result.unbalanced_length = int((~choice.length_met).sum())
    result.unbalanced_classifier = int((~choice.score_met).sum()) if options.rounds else 0
    result.unbalanced_similarity = int((~choice.similarity_met).sum())
    met = choice.length_met & choice.score_met & choice.similarity_met
    result.unbalanced = int((~met).sum())
    result.unbalanced_ids = frozenset(pool.question_id for pool, ok in zip(usable, met, strict=True) if not ok)
    return result


@dataclass
class _Choice:
    chosen: list[tuple[int, ...]]  # per question: indices into its considered false candidates
    length_met: np.ndarray
    score_met: np.ndarray
    similarity_met: np.ndarray


class _Table:
    """Every question's ground truth (first) and considered false candidates, flat, with their
    surface features (absolute ones: a candidate's features must not depend on which others are
    chosen with it)."""

    def __init__(self, pools: Sequence[ChoicePool], *, k: int) -> None:
        self.k = k
        self.n_false = np.array([min(len(p.false_ids), MAX_CONSIDERED) for p in pools], dtype=np.int64)
        sizes = self.n_false + 1
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.texts = [t for p, n in zip(pools, self.n_false, strict=True) for t in (p.ground_truth, *p.false_texts[:n])]
        self.groups = np.repeat(np.arange(len(pools)), sizes)
        base = base_features(self.texts)
        base["similarity"] = similarity_to_others(self.texts, self.groups, sizes)
        self.chars = base["chars"]
        # the categorical marks of a writing style: tokenised, final punctuation, initial capital
        self.style = np.column_stack(
            [
                (base["spaced_punctuation"] + base["split_clitics"]) > 0,
                base["ends_with_punctuation"] > 0,
                base["initial_capital"] > 0,
            ]
        )
        self.features = np.column_stack(list(base.values())).astype(np.float64)
        self.cosines = _cosines_by_size(self.texts, self.starts, self.n_false)

    def classifier_scores(self, choice: _Choice, options: BalanceOptions) -> tuple[np.ndarray, float]:
        """Out-of-fold P(ground truth) of every candidate, from models trained on the current
        choice; and how often the current choice's ground truth had the highest score."""
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        n = len(self.n_false)
        rows = np.concatenate(
            [self.starts[q] + np.array([0, *(1 + i for i in chosen)]) for q, chosen in enumerate(choice.chosen)]
        )
        labels = np.zeros(len(rows), dtype=np.int64)
        labels[np.arange(n) * (self.k + 1)] = 1
        folds = max(2, min(options.folds, n))
        fold_of = np.random.default_rng(options.seed + 1).permutation(n) % folds
        scores = np.zeros(len(self.texts))
        row_question = self.groups[rows]
        for fold in range(folds):
            train = fold_of[row_question] != fold
            if n < 2 or len(set(labels[train])) < 2:
                continue
            model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, random_state=options.seed))
            model.fit(self.features[rows[train]], labels[train])
            held_out = fold_of[self.groups] == fold
            scores[held_out] = model.predict_proba(self.features[held_out])[:, 1]
        ground_truth = scores[self.starts]
        chosen_best = np.array(
            [max(scores[self.starts[q] + 1 + i] for i in chosen) for q, chosen in enumerate(choice.chosen)]
        )
        return scores, float(np.mean(ground_truth > chosen_best))

    def choose(self, scores, targets, *, classifier: bool) -> _Choice:
        """Per question, the k false candidates whose places for the ground truth (how many chosen
        are shorter; how many the classifier scores lower; how many are less similar to the others)
        are nearest the targets; ties go to the choice closest to the ground truth in length, then
        to the caller's order."""
        target_length, target_score, target_similarity = targets
        n = len(self.n_false)
        chosen: list[tuple[int, ...]] = [()] * n
        met = {name: np.ones(n, dtype=bool) for name in ("length", "score", "similarity")}
        for size in np.unique(self.n_false):
            subsets = np.array(list(combinations(range(size), self.k)), dtype=np.int64)  # (s, k)
            every = np.flatnonzero(self.n_false == size)
            for block in range(0, len(every), _BLOCK):
                questions = every[block : block + _BLOCK]
                index = self.starts[questions][:, None] + 1 + np.arange(size)[None, :]  # (q, size)
                chars, gt_chars = self.chars[index], self.chars[self.starts[questions]][:, None]
                value, gt_value = scores[index], scores[self.starts[questions]][:, None]
                shorter = (chars < gt_chars)[:, subsets].sum(axis=2)  # (q, s)
                lower = (value < gt_value)[:, subsets].sum(axis=2)
                misses = {
                    "length": np.abs(shorter - target_length[questions][:, None]),
                    "score": np.abs(lower - target_score[questions][:, None]) if classifier else 0 * shorter,
                }
                less_similar, margin = self._less_similar(size, every, block, subsets)
                misses["similarity"] = np.abs(less_similar - target_similarity[questions][:, None])
                closeness = np.abs(np.log1p(chars) - np.log1p(gt_chars))[:, subsets].mean(axis=2)
                # style marks a chosen candidate does not share with the ground truth, summed
                mismatch = (self.style[index] != self.style[self.starts[questions]][:, None, :]).sum(axis=2)
                style_mismatch = mismatch[:, subsets].sum(axis=2)
                cost = (
                    misses["length"]
                    + misses["score"]
                    + misses["similarity"]
                    + style_mismatch
                    + SIMILARITY_MARGIN_WEIGHT * np.abs(margin)
                    + _LENGTH_TIE_BREAK * closeness
                )
                best = np.argmin(cost, axis=1)  # the first subset in the caller's order among equals
                rows = np.arange(len(questions))
                for q, b in zip(questions, best, strict=True):
                    chosen[q] = tuple(int(i) for i in subsets[b])
                for name, miss in misses.items():
                    met[name][questions] = miss[rows, best] == 0
        return _Choice(chosen, length_met=met["length"], score_met=met["score"], similarity_met=met["similarity"])

    def _less_similar(self, size: int, every: np.ndarray, block: int, subsets: np.ndarray) -> np.ndarray:
        """(q, s): for each subset, how many of its candidates are less similar to the others of
        the chosen set (ground truth included) than the ground truth is."""
        cos = self.cosines[size][block : block + _BLOCK]  # (q, size + 1, size + 1), ground truth first
        members = 1 + subsets  # (s, k)
        gt_sum = cos[:, 0, :][:, members].sum(axis=2)  # (q, s)
        pair = cos[:, members[:, :, None], members[:, None, :]]  # (q, s, k, k)
        own = cos[:, members, members]  # (q, s, k): a text's cosine to itself
        candidate_sum = cos[:, members, 0] + pair.sum(axis=3) - own
        margin = (gt_sum - candidate_sum.mean(axis=2)) / len(members[0])
        return (candidate_sum < gt_sum[:, :, None] - 1e-12).sum(axis=2), margin


def _cosines_by_size(texts: list[str], starts: np.ndarray, n_false: np.ndarray) -> dict[int, np.ndarray]:
    """Per number of false candidates: (questions of that size, size + 1, size + 1) TF-IDF cosines
    between each question's texts (ground truth first), questions in table order."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from .features import WORD

    try:
        x = TfidfVectorizer(token_pattern=WORD).fit_transform(texts).tocsr()
    except ValueError:  # no word at all
        x = None
    by_size: dict[int, list[np.ndarray]] = {}
    for start, size in zip(starts, n_false, strict=True):
        if x is None:
            block = np.eye(size + 1)
        else:
            rows = x[start : start + size + 1]
            block = (rows @ rows.T).toarray()
        by_size.setdefault(int(size), []).append(block)
    return {size: np.stack(blocks) for size, blocks in by_size.items()}
