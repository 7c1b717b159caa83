"""Inter-annotator agreement from category-count tables (items x categories).

Fleiss' kappa comes from statsmodels; the table itself is aggregated in the database
(selectors.score_category_table), one row per scored item.
"""

import numpy as np

N_CATEGORIES = 6  # scores 0..5


def fleiss_from_table(table: np.ndarray) -> float | None:
    """Fleiss' kappa of a table whose rows all have the same number of raters (>= 2)."""
    if table.shape[0] == 0:
        return None
    # Imported here: statsmodels pulls in pandas and scipy (seconds), which every
    # management command and web process would otherwise pay at start-up.
    from statsmodels.stats.inter_rater import fleiss_kappa

    with np.errstate(invalid="ignore", divide="ignore"):
        value = float(fleiss_kappa(table, method="fleiss"))
    return None if np.isnan(value) else value


def binary_table(table: np.ndarray, *, above: int = 3) -> np.ndarray:
    """Collapse 0-5 counts into two classes: score > ``above`` and score <= ``above``."""
    return np.stack([table[:, above + 1 :].sum(axis=1), table[:, : above + 1].sum(axis=1)], axis=1)


def agreement_summary(table: np.ndarray) -> dict:
    """Fleiss' kappa over six categories and over two classes (> 3 vs <= 3).

    Kappa needs the same number of raters per item: the most common number is used and
    items with another number are counted as skipped.
    """
    if table.shape[0] == 0:
        return {"items": 0, "raters": 0, "items_skipped": 0, "fleiss_kappa_6": None, "fleiss_kappa_2": None}
    per_item = table.sum(axis=1)
    values, counts = np.unique(per_item[per_item >= 2], return_counts=True)
    if len(values) == 0:
        return {
            "items": 0,
            "raters": 0,
            "items_skipped": int(table.shape[0]),
            "fleiss_kappa_6": None,
            "fleiss_kappa_2": None,
        }
    raters = int(values[np.argmax(counts)])
    full = table[per_item == raters]
    return {
        "items": int(full.shape[0]),
        "raters": raters,
        "items_skipped": int(table.shape[0] - full.shape[0]),
        "fleiss_kappa_6": _round(fleiss_from_table(full)),
        "fleiss_kappa_2": _round(fleiss_from_table(binary_table(full))),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
