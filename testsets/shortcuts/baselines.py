"""Context-free baselines: each scores every candidate from the candidates alone and picks, per
question, the highest-scored one. One class per baseline behind :class:`Baseline`; the registry
lists them in the order the audit reports them. An app above testsets adds its own from its
``AppConfig.ready()`` (evaluation: a registered system scoring the candidates with an empty
context) through :func:`shortcut_baseline_register`."""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .features import CandidateTable


@dataclass(frozen=True)
class AuditOptions:
    seed: int = 0
    folds: int = 5
    system: str | None = None  # a registered system for the candidate-only language-model baseline


class Baseline(ABC):
    name: ClassVar[str]
    label: ClassVar[str]  # what it picks, as the pages and the card say it

    @classmethod
    def wanted(cls, options: AuditOptions) -> bool:
        """Whether an audit with ``options`` runs this baseline."""
        return True

    @classmethod
    def check(cls, options: AuditOptions) -> None:
        """Raise a UserError for options it cannot run with (before a job is queued)."""
        return None

    def skipped(self, table: CandidateTable, options: AuditOptions) -> str:
        """Why it cannot run on ``table`` ("" when it can)."""
        return ""

    @abstractmethod
    def scores(self, table: CandidateTable, options: AuditOptions) -> np.ndarray:
        """One score per candidate of ``table`` (in its order); the highest of a question is picked."""

    def details(self) -> dict:
        """What the audit records besides the accuracy (after :meth:`scores`)."""
        return {}


class LongestReply(Baseline):
    name = "longest"
    label = "longest reply"

    def scores(self, table, options):
        return table.column("chars")


class ShortestReply(Baseline):
    name = "shortest"
    label = "shortest reply"

    def scores(self, table, options):
        return -table.column("chars")


class MostSimilar(Baseline):
    """The candidate closest to the others: a ground truth that false candidates were retrieved
    around sits in their middle."""

    name = "most_similar"
    label = "most similar to the other candidates (TF-IDF cosine)"

    def scores(self, table, options):
        return table.column("similarity")


class LeastSimilar(Baseline):
    """The odd one out: a ground truth from another corpus than its false candidates."""

    name = "least_similar"
    label = "least similar to the other candidates (TF-IDF cosine)"

    def scores(self, table, options):
        return -table.column("similarity")


class SurfaceClassifier(Baseline):
    """Logistic regression on the surface features (features.py), P(ground truth) per candidate,
    out of fold: questions are split into folds (seeded), and a question is scored by a model that
    never saw it."""

    name = "surface_classifier"
    label = "surface-feature classifier (length, punctuation, casing, tokenisation, word rarity, similarity)"
    TOP_FEATURES = 5

    def __init__(self) -> None:
        self._details: dict = {}

    def skipped(self, table, options):
        if table.n_questions < 2 or options.folds < 2:
            return "needs at least 2 questions and 2 folds"
        return ""

    def scores(self, table, options):
        from sklearn.model_selection import GroupKFold

        folds = min(options.folds, table.n_questions)
        # GroupKFold assigns whole questions to folds; relabelling the questions with a seeded
        # permutation makes the split depend on the seed, not on the questions' order.
        relabelled = np.random.default_rng(options.seed).permutation(table.n_questions)[table.groups]
        out_of_fold = np.zeros(len(table.y))
        for train, test in GroupKFold(n_splits=folds).split(table.features, table.y, groups=relabelled):
            model = self._model(options).fit(table.features[train], table.y[train])
            out_of_fold[test] = model.predict_proba(table.features[test])[:, 1]
        whole = self._model(options).fit(table.features, table.y)
        weights = whole[-1].coef_[0]
        top = np.argsort(-np.abs(weights), kind="stable")[: self.TOP_FEATURES]
        self._details = {
            "folds": folds,
            "top_features": [{"feature": table.names[i], "weight": round(float(weights[i]), 3)} for i in top],
        }
        return out_of_fold

    def details(self):
        return self._details

    @staticmethod
    def _model(options: AuditOptions):
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, random_state=options.seed))


_baselines: dict[str, type[Baseline]] = {
    cls.name: cls for cls in (LongestReply, ShortestReply, MostSimilar, LeastSimilar, SurfaceClassifier)
}


def shortcut_baseline_register(cls: type[Baseline]) -> None:
    """Add a baseline (from an app's ``AppConfig.ready()``); the same class again is a no-op,
    another class under a taken name an error."""
    existing = _baselines.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(f"shortcut baseline {cls.name!r} is registered already by {existing.__module__}")
    _baselines[cls.name] = cls


def shortcut_baselines() -> list[type[Baseline]]:
    return list(_baselines.values())
