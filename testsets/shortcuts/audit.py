"""The audit itself: every wanted baseline's accuracy over the pools, with its 95 % Wilson interval,
beside chance. A pure function of the pools and the options (the service stores it; the build puts
it in the manifest)."""

from collections.abc import Sequence

import numpy as np

from core.errors import UserError

from .baselines import AuditOptions, shortcut_baselines
from .features import candidate_table
from .pools import Pool
from .stats import chance_accuracy, wilson_interval

AUDIT_VERSION = 1
# What the baselines import when they first run (seconds); a build imports them while it waits on
# the database (core.imports_beside)
AUDIT_MODULES = (
    "scipy.sparse",
    "sklearn.feature_extraction.text",
    "sklearn.linear_model",
    "sklearn.model_selection",
    "sklearn.pipeline",
    "sklearn.preprocessing",
)
DIGITS = 4  # the stored numbers: enough to compare, stable to print


def shortcut_audit_compute(pools: Sequence[Pool], options: AuditOptions, *, progress=None) -> dict:
    """The audit of ``pools`` as JSON: questions, candidates, chance and per baseline its accuracy,
    interval and whether the interval's lower bound is above chance."""
    pools = [pool for pool in pools if len(pool.texts) >= 2]
    if not pools:
        raise UserError("nothing to audit: no question has a ground truth and at least one false candidate")
    table = candidate_table(pools)
    chance = chance_accuracy(table.sizes.tolist())
    baselines = [cls for cls in shortcut_baselines() if cls.wanted(options)]
    rows = []
    for done, cls in enumerate(baselines):
        if progress:
            progress.update(done=done, total=len(baselines), force=True, phase=cls.label, unit="baselines")
        baseline = cls()
        reason = baseline.skipped(table, options)
        if reason:
            rows.append({"name": cls.name, "label": cls.label, "skipped": reason})
            continue
        credits = question_credits(np.asarray(baseline.scores(table, options), dtype=np.float64), table)
        rows.append(_row(cls, credits, chance, baseline.details()))
    return {
        "version": AUDIT_VERSION,
        "questions": table.n_questions,
        "candidates": len(table.texts),
        "chance": round(chance, DIGITS),
        "seed": options.seed,
        "folds": options.folds,
        "system": options.system,
        "baselines": rows,
        "above_chance": [row["name"] for row in rows if row.get("above_chance")],
    }


def question_credits(scores: np.ndarray, table) -> np.ndarray:
    """Per question: 1 / (candidates tied for the highest score) when the ground truth is one of
    them, else 0 (stats.credit, for all questions at once)."""
    best = np.full(table.n_questions, -np.inf)
    np.maximum.at(best, table.groups, scores)
    at_best = scores == best[table.groups]
    tied = np.bincount(table.groups, weights=at_best, minlength=table.n_questions)
    ground_truth_at_best = np.bincount(table.groups, weights=at_best & (table.y == 1), minlength=table.n_questions)
    return ground_truth_at_best / tied


def _row(cls, credits: np.ndarray, chance: float, details: dict) -> dict:
    n = len(credits)
    low, high = wilson_interval(float(credits.sum()), n)
    return {
        "name": cls.name,
        "label": cls.label,
        "accuracy": round(float(credits.mean()), DIGITS),
        "ci95": [round(low, DIGITS), round(high, DIGITS)],
        "above_chance": bool(low > chance),
        **details,
    }


def audit_flagged(audit: dict | None) -> list[dict]:
    """The baselines of a stored audit whose interval lies above chance."""
    return [row for row in (audit or {}).get("baselines", []) if row.get("above_chance")]
