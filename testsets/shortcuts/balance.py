"""Shortcut-aware choice of each question's false candidates, among those the human filter rules
kept: the ground truth should not stand out from them by the candidates alone.

A baseline that picks the longest reply, the candidate most similar to the others or the one a
surface classifier scores highest finds the ground truth at chance when, over all questions, the
ground truth's place on that order (how many chosen candidates are shorter, less similar to the
others, scored lower) is spread evenly over its k + 1 values. The choice spreads it on three orders:
- length;
- similarity to the other candidates (mean TF-IDF cosine): false candidates retrieved around the
  ground truth are each like it more than like each other, so it sits in their middle;
- the score of a surface classifier (adversarial filtering, Zellers et al. 2018; Le Bras et al.
  2020): a logistic regression on the candidates' surface features is trained on the current
  choice (out of fold: a question is scored by a model that never saw it) and the choice redone
  against its scores, for ``rounds``.
Questions, in a seeded order, each take the subset of k whose places are the least taken so far.
Near-ties go to candidates that share the ground truth's marks of style (tokenised or not, final
punctuation, initial capital), then to a small similarity margin, then to length closeness, then to
the caller's order. A question is *unbalanced* when it crowds a place beyond its share on some
order (n / (k + 1)); leaving those out leaves every place within its share.

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
            "method": "place-balanced",
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


def balanced_choice(pools: Sequence[ChoicePool], *, k: int, options: BalanceOptions) -> BalanceResult:
    usable = [p for p in pools if len(p.false_ids) >= k]
    result = BalanceResult(chosen={}, questions=len(usable), too_few=len(pools) - len(usable))
    if not usable:
        return result
    table = _Table(usable, k=k)
    scores = np.zeros(len(table.texts))  # no classifier yet: length and similarity only
    choice = table.choose(scores, classifier=False, seed=options.seed)
    for _ in range(options.rounds):
        scores, accuracy = table.classifier_scores(choice, options)
        result.rounds.append({"accuracy": round(accuracy, 4)})
        choice = table.choose(scores, classifier=True, seed=options.seed)
    result.chosen = {
        pool.question_id: tuple(pool.false_ids[i] for i in chosen)
        for pool, chosen in zip(usable, choice.chosen, strict=True)
    }
    crowded = choice.over_share(k)
    result.unbalanced_length = len(crowded[0])
    result.unbalanced_similarity = len(crowded[1])
    result.unbalanced_classifier = len(crowded.get(2, ()))
    unbalanced = set().union(*(set(ids.tolist()) for ids in crowded.values()))
    result.unbalanced = len(unbalanced)
    result.unbalanced_ids = frozenset(usable[i].question_id for i in unbalanced)
    return result


@dataclass
class _Choice:
    chosen: list[tuple[int, ...]]  # per question: indices into its considered false candidates
    places: np.ndarray  # (questions, orders): the ground truth's place on each order
    costs: np.ndarray  # what each question's choice cost (crowding of its places, style, margin)

    def over_share(self, k: int) -> dict[int, np.ndarray]:
        """Per order, the questions that crowd a place beyond its share (n / (k + 1)): of those
        at that place, the ones whose choice cost most."""
        n = len(self.chosen)
        out = {}
        for order in range(self.places.shape[1]):
            crowded = []
            for place in range(k + 1):
                at_place = np.flatnonzero(self.places[:, order] == place)
                excess = len(at_place) - int(np.ceil(n / (k + 1)))
                if excess > 0:
                    crowded.extend(at_place[np.argsort(-self.costs[at_place], kind="stable")[:excess]])
            out[order] = np.array(sorted(crowded), dtype=np.int64)
        return out


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

    def choose(self, scores, *, classifier: bool, seed: int) -> _Choice:
        """The k false candidates of every question, so that over all questions the ground truth's
        place on each order (how many chosen are shorter; how many the classifier scores lower; how
        many are less similar to the others) is spread evenly over its k + 1 values: questions in a
        seeded order each take the subset whose places are the least taken so far, style and
        similarity margin breaking near-ties (closest in length, then the caller's order, last)."""
        n = len(self.n_false)
        options = [self._options(size, scores, classifier=classifier) for size in np.unique(self.n_false)]
        by_question: dict[int, tuple] = {}
        for questions, subsets, places, base in options:
            for row, q in enumerate(questions):
                by_question[int(q)] = (subsets, places[row], base[row])
        orders = 3 if classifier else 2
        taken = np.zeros((orders, self.k + 1))
        place_of = np.zeros((n, orders), dtype=np.int64)
        chosen: list[tuple[int, ...]] = [()] * n
        extra = np.zeros(n)
        for done, q in enumerate(np.random.default_rng(seed).permutation(n)):
            subsets, places, base = by_question[int(q)]
            share = done / (self.k + 1)
            crowding = sum(taken[o, places[:, o]] - share for o in range(orders))
            best = int(np.argmin(crowding + base))
            chosen[q] = tuple(int(i) for i in subsets[best])
            place_of[q] = places[best, :orders]
            extra[q] = crowding[best] + base[best]
            taken[np.arange(orders), place_of[q]] += 1
        return _Choice(chosen, places=place_of, costs=extra)

    def _options(self, size: int, scores, *, classifier: bool):
        """For the questions with ``size`` false candidates: their indices, the subsets of k, and per
        question and subset the ground truth's places (length, similarity, classifier) and the cost
        of style marks not shared, of a similarity margin and of length distance."""
        subsets = np.array(list(combinations(range(size), self.k)), dtype=np.int64)  # (s, k)
        every = np.flatnonzero(self.n_false == size)
        places, costs = [], []
        for block in range(0, len(every), _BLOCK):
            questions = every[block : block + _BLOCK]
            index = self.starts[questions][:, None] + 1 + np.arange(size)[None, :]  # (q, size)
            gt = self.starts[questions][:, None]
            shorter = (self.chars[index] < self.chars[gt])[:, subsets].sum(axis=2)  # (q, s)
            lower = (scores[index] < scores[gt])[:, subsets].sum(axis=2)
            less_similar, margin = self._less_similar(size, every, block, subsets)
            closeness = np.abs(np.log1p(self.chars[index]) - np.log1p(self.chars[gt]))[:, subsets].mean(axis=2)
            # style marks a chosen candidate does not share with the ground truth, summed
            mismatch = (self.style[index] != self.style[self.starts[questions]][:, None, :]).sum(axis=2)
            places.append(np.stack([shorter, less_similar, lower], axis=2))
            costs.append(
                mismatch[:, subsets].sum(axis=2)
                + SIMILARITY_MARGIN_WEIGHT * np.abs(margin)
                + _LENGTH_TIE_BREAK * closeness
            )
        return every, subsets, np.concatenate(places), np.concatenate(costs)

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
