"""The ranking report from plain data: Table 3 and Figure 2 of Sato et al. (2020).

:func:`correlation_table` takes plain mappings (per-system human scores, CHOSEN accuracies with their
CIs, correctness on contrastive pairs, reference-based metric scores, the per-trial correlations of
the RANDOM test sets, the split-half bound) and returns a JSON-able dict. Its rows are CHOSEN
accuracy, RANDOM (mean and range over trials), pair correctness, BLEU-1, BLEU-2, METEOR, ROUGE-L and
the human split-half bound; its columns Spearman and Kendall, each with the p-value and the bootstrap
CI where there is one. Every part is optional: rows without data are left out. :func:`html_rows`
and :func:`text_table` render it; :func:`box_plot_svg` draws Figure 2 (RANDOM trial correlations as
box plots, CHOSEN as a dot).
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence

import numpy as np

from evaluation.metrics.correlation import METHODS, SplitHalf, aligned, correlate
from evaluation.metrics.reference import METRICS

CHOSEN = "CHOSEN accuracy"
PAIRS = "Pair correctness"
RANDOM = "RANDOM accuracy"
SPLIT_HALF = "Human (split-half)"
SPLIT_HALF_FIELDS = ("mean", "std", "min", "max", "trials", "distinct_splits", "annotators")


def _accuracy(value) -> dict:
    if isinstance(value, Mapping):
        return {"accuracy": float(value["accuracy"]), "ci_low": value.get("ci_low"), "ci_high": value.get("ci_high")}
    return {"accuracy": float(value), "ci_low": None, "ci_high": None}


def _clean(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def random_trial_correlations(
    human: Mapping[str, float], trial_accuracies: Sequence[Mapping[str, float]]
) -> list[dict[str, float]]:
    """Spearman and Kendall of each RANDOM trial's system accuracies against the human scores."""
    out = []
    for accuracies in trial_accuracies:
        _, h, a = aligned(human, accuracies)
        out.append({m: correlate(h, a, m, resamples=0).value for m in METHODS})
    return out


def _range_cell(values: Sequence[float]) -> dict:
    v = np.array([x for x in values if x is not None and not math.isnan(x)], float)
    if not len(v):
        return {"mean": None, "min": None, "max": None, "trials": 0}
    return {"mean": float(v.mean()), "min": float(v.min()), "max": float(v.max()), "trials": int(len(v))}


def correlation_table(
    *,
    human: Mapping[str, float],
    chosen_accuracy: Mapping[str, float | Mapping] | None = None,
    pair_correctness: Mapping[str, float | Mapping] | None = None,
    metric_scores: Mapping[str, Mapping[str, float]] | None = None,
    random_correlations: Sequence[Mapping[str, float]] | None = None,
    split_half: Mapping[str, SplitHalf | Mapping] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict:
    """Table 3 as a JSON-able dict (see the module docstring)."""
    accuracies = {s: _accuracy(v) for s, v in (chosen_accuracy or {}).items()}
    metric_scores = metric_scores or {}
    metric_names = [m for m in METRICS if any(m in row for row in metric_scores.values())]
    extra = sorted({m for row in metric_scores.values() for m in row} - set(METRICS))
    metric_names += extra

    systems = []
    for system in sorted(human, key=lambda s: (-human[s], s)):
        entry = {"system": system, "human": float(human[system])}
        if system in accuracies:
            entry.update(accuracies[system])
        if system in metric_scores:
            entry["metrics"] = {m: float(v) for m, v in metric_scores[system].items()}
        systems.append(entry)

    def point_row(name: str, scores: Mapping[str, float]) -> dict:
        row = {"name": name, "kind": "point"}
        for method in METHODS:
            c = correlate(human, scores, method, resamples=resamples, seed=seed, confidence=confidence)
            row[method] = {
                "value": _clean(c.value),
                "p_value": _clean(c.p_value),
                "ci_low": _clean(c.ci_low),
                "ci_high": _clean(c.ci_high),
                "n": c.n,
            }
        return row

    rows = []
    if accuracies:
        rows.append(point_row(CHOSEN, {s: a["accuracy"] for s, a in accuracies.items()}))
    if random_correlations:
        row = {"name": RANDOM, "kind": "range"}
        for method in METHODS:
            row[method] = _range_cell([c.get(method) for c in random_correlations])
        rows.append(row)
    if pair_correctness:
        rows.append(point_row(PAIRS, {s: _accuracy(v)["accuracy"] for s, v in pair_correctness.items()}))
    for metric in metric_names:
        scores = {s: r[metric] for s, r in metric_scores.items() if metric in r}
        rows.append(point_row(metric, scores))
    if split_half:
        row = {"name": SPLIT_HALF, "kind": "split_half"}
        for method in METHODS:
            if method in split_half:
                bound = split_half[method]
                bound = bound.as_dict() if isinstance(bound, SplitHalf) else dict(bound)
                row[method] = {k: bound.get(k) for k in SPLIT_HALF_FIELDS if k in bound}
        rows.append(row)
    return {
        "n_systems": len(human),
        "resamples": resamples,
        "seed": seed,
        "confidence": confidence,
        "systems": systems,
        "rows": rows,
    }


def _fmt(x, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def format_cell(row: Mapping, method: str) -> str:
    """One table cell as text: ``0.563 (p=0.012) [0.122, 0.809]``, ``0.41 mean [0.12, 0.66]``, ..."""
    cell = row.get(method)
    if not cell:
        return "–"
    if row["kind"] == "point":
        ci = "" if cell["ci_low"] is None else f" [{_fmt(cell['ci_low'])}, {_fmt(cell['ci_high'])}]"
        return f"{_fmt(cell['value'])} (p={_fmt(cell['p_value'])}){ci}"
    if row["kind"] == "range":
        return f"{_fmt(cell['mean'])} mean, range [{_fmt(cell['min'])}, {_fmt(cell['max'])}] ({cell['trials']} trials)"
    distinct = f", {cell['distinct_splits']} distinct" if cell.get("distinct_splits") else ""
    return f"{_fmt(cell['mean'])} ± {_fmt(cell['std'])} ({cell['trials']} trials{distinct})"


def html_rows(table: Mapping) -> list[dict]:
    """Rows ready for a template: ``{"name": ..., "cells": [spearman text, kendall text]}``."""
    return [{"name": row["name"], "cells": [format_cell(row, m) for m in METHODS]} for row in table["rows"]]


def text_table(table: Mapping) -> str:
    lines = []
    if table["systems"]:
        metric_names = list(table["systems"][0].get("metrics", {}))
        has_acc = any("accuracy" in s for s in table["systems"])
        width = max(len(s["system"]) for s in table["systems"])
        head = f"{'system':<{width}}  {'human':>6}" + ("  accuracy" if has_acc else "")
        head += "".join(f"  {m:>8}" for m in metric_names)
        lines += [f"Systems ({table['n_systems']}), best human score first", head]
        for s in table["systems"]:
            line = f"{s['system']:<{width}}  {s['human']:6.3f}"
            if has_acc:
                line += f"  {_fmt(s.get('accuracy')):>8}"
            line += "".join(f"  {s.get('metrics', {}).get(m, math.nan):8.4f}" for m in metric_names)
            lines.append(line)
        lines.append("")
    rows = html_rows(table)
    width = max([len(r["name"]) for r in rows] + [6])
    conf = round(table["confidence"] * 100)
    lines.append(
        f"Correlation with the human ranking (p-value, {conf}% bootstrap CI over systems, "
        f"{table['resamples']} resamples)"
    )
    lines.append(f"{'':<{width}}  {'Spearman':<40}  Kendall")
    for r in rows:
        lines.append(f"{r['name']:<{width}}  {r['cells'][0]:<40}  {r['cells'][1]}")
    return "\n".join(lines) + "\n"


def box_plot_svg(
    random_correlations: Sequence[Mapping[str, float]],
    chosen: Mapping[str, float] | None = None,
    *,
    title: str = "Correlation with the human ranking",
) -> str:
    """Figure 2: a box plot per method of the RANDOM trials' correlations, CHOSEN drawn as a dot."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    data = [[c[m] for c in random_correlations if c.get(m) is not None and not math.isnan(c[m])] for m in METHODS]
    if not any(data):
        raise ValueError("no RANDOM trial correlations to plot")
    figure = Figure(figsize=(4.5, 3.5))
    FigureCanvasAgg(figure)  # the Agg canvas, without touching pyplot's global backend
    ax = figure.add_subplot()
    positions = list(range(1, len(METHODS) + 1))
    ax.boxplot(data, positions=positions, widths=0.5)
    ax.set_xticks(positions, [m.capitalize() for m in METHODS])
    if chosen:
        xs = [p for p, m in zip(positions, METHODS, strict=True) if chosen.get(m) is not None]
        ys = [chosen[m] for m in METHODS if chosen.get(m) is not None]
        ax.scatter(xs, ys, color="tab:red", zorder=3, label="CHOSEN")
        ax.legend(loc="best")  # away from the boxes: with few systems they sit at +1 or -1
    ax.set_ylabel("correlation")
    ax.set_title(f"{title}\n(RANDOM: {len(random_correlations)} trials)", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    out = io.StringIO()
    # no date and fixed element ids: the same data gives the same SVG (cacheable, diffable)
    with matplotlib.rc_context({"svg.hashsalt": "wellchosen"}):
        figure.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def zhao_reference_report(
    path,
    *,
    trials: int = 1000,
    seed: int = 0,
    metrics: Sequence[str] = METRICS,
    aspect: str = "appropriateness",
    wordnet=None,
) -> dict:
    """The reference-based part of the report on the Zhao et al. (2020) ratings, end to end.

    Generation systems only (the ground truth and the negative sample are left out); human score =
    mean over responses of the mean ``aspect`` rating; metrics on each system's responses against
    their references; ``trials`` bootstrap resamples and split-half trials.
    """
    from evaluation.human import generation_systems, ratings_by_system, read_zhao, system_human_scores
    from evaluation.metrics.correlation import split_half_bound
    from evaluation.metrics.reference import system_scores

    responses = list(generation_systems(read_zhao(path, aspect=aspect)))
    ratings = ratings_by_system(responses)
    pairs: dict[str, list] = {}
    for r in responses:
        pairs.setdefault(r.system, []).append((r.response, r.references))
    table = correlation_table(
        human=system_human_scores(ratings),
        metric_scores=system_scores(pairs, metrics=metrics, wordnet=wordnet) if metrics else None,
        split_half={m: split_half_bound(ratings, m, trials=trials, seed=seed) for m in METHODS},
        resamples=trials,
        seed=seed,
    )
    table["source"] = {"file": str(path), "aspect": aspect, "responses": len(responses)}
    return table
