"""Inter-annotator agreement from category-count tables (items x categories).

Fleiss' kappa is computed here with numpy, as statsmodels' ``fleiss_kappa(table, method="fleiss")``
computes it, operation for operation (the tests hold the two equal): importing statsmodels (it
pulls in pandas and scipy) took 1.2 s of every build of a test set. The table itself is aggregated
in the database (selectors.score_category_table), one row per scored item.
"""

import numpy as np

N_CATEGORIES = 6  # scores 0..5


def fleiss_from_table(table: np.ndarray) -> float | None:
    """Fleiss' kappa of a table whose rows all have the same number of raters (>= 2)."""
    if table.shape[0] == 0:
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        value = float(_fleiss_kappa(table))
    return None if np.isnan(value) else value


def _fleiss_kappa(table: np.ndarray) -> float:
    """Fleiss (1971): the mean observed agreement per item against the agreement expected from the
    categories' marginal shares."""
    n_raters = table.sum(1).max()
    p_category = table.sum(0) / table.sum()
    p_item = ((table * table).sum(1) - n_raters) / (n_raters * (n_raters - 1.0))
    p_mean, p_expected = p_item.mean(), (p_category * p_category).sum()
    return (p_mean - p_expected) / (1 - p_expected)


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


def krippendorff_alpha(table: np.ndarray, *, level: str = "ordinal") -> float | None:
    """Krippendorff's alpha from per-item value counts (items x 6); items may have any number of
    raters, so adaptively stopped (missing) scores are fine. Items with one rater carry no pairs."""
    import krippendorff

    usable = table[table.sum(axis=1) >= 2]
    if usable.shape[0] < 2 or len(np.unique(np.nonzero(usable)[1])) < 2:
        return None
    return float(
        krippendorff.alpha(value_counts=usable, value_domain=list(range(N_CATEGORIES)), level_of_measurement=level)
    )


def krippendorff_bootstrap(table: np.ndarray, *, replicates: int = 200, seed: int = 0, level: str = "ordinal") -> dict:
    """Alpha with a 95 % percentile interval from resampling items (with replacement)."""
    usable = table[table.sum(axis=1) >= 2]
    alpha = krippendorff_alpha(usable, level=level)
    if alpha is None:
        return {"alpha": None, "ci95": None, "items": int(usable.shape[0])}
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(replicates):
        value = krippendorff_alpha(usable[rng.integers(0, usable.shape[0], usable.shape[0])], level=level)
        if value is not None:
            draws.append(value)
    low, high = np.percentile(draws, [2.5, 97.5])
    return {
        "alpha": round(alpha, 6),
        "ci95": [round(float(low), 6), round(float(high), 6)],
        "items": int(usable.shape[0]),
        "replicates": len(draws),
    }


def fleiss_bootstrap(table: np.ndarray, *, replicates: int = 200, seed: int = 0) -> dict:
    """Fleiss' kappa (six categories and two classes, as agreement_summary) with 95 % percentile
    intervals from resampling items with replacement; only items with the common number of raters."""
    summary = agreement_summary(table)
    result = {key: {"kappa": summary[f"fleiss_kappa_{key}"], "ci95": None} for key in ("6", "2")}
    if not summary["items"]:
        return {"items": 0, "raters": 0, **result}
    full = table[table.sum(axis=1) == summary["raters"]]
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {"6": [], "2": []}
    for _ in range(replicates):
        sample = full[rng.integers(0, full.shape[0], full.shape[0])]
        for key, sampled in (("6", sample), ("2", binary_table(sample))):
            value = fleiss_from_table(sampled)
            if value is not None:
                draws[key].append(value)
    for key, values in draws.items():
        if values and result[key]["kappa"] is not None:
            low, high = np.percentile(values, [2.5, 97.5])
            result[key]["ci95"] = [round(float(low), 6), round(float(high), 6)]
    return {"items": summary["items"], "raters": summary["raters"], **result}
