"""The campaign report page from the cached report JSON: shared by the report page and ``report --format html``.

Only formatting happens here (no statistics): the page costs one query whatever the campaign's size.
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string

from evaluation.metrics.accuracy import MIN_PAIRS_TO_RANK, ML_PAIRS_NOTE, PAIR_CHANCE
from evaluation.metrics.correlation import METHODS
from evaluation.metrics.reference import METRICS
from evaluation.models import Campaign
from evaluation.report import html_rows

BREAKDOWNS = (("per_label", "Error label"), ("per_source", "Source of the false candidate"))


def report_context(campaign: Campaign) -> dict:
    report = campaign.report or {}
    leaderboard = report.get("leaderboard", [])
    metric_names = [m for m in METRICS if any(m in row.get("metrics", {}) for row in leaderboard)]
    for row in leaderboard:
        row["metric_values"] = [row.get("metrics", {}).get(m) for m in metric_names]
    table = report.get("table")
    local = [row["system"] for row in leaderboard if row.get("accuracy") is not None]
    breakdowns = []
    for part, title in BREAKDOWNS:
        cells = (report.get("breakdown") or {}).get(part) or {}
        if cells:
            breakdowns.append(
                {
                    "title": title,
                    "systems": local,
                    "rows": [{"key": key, "cells": [row.get(s) for s in local]} for key, row in cells.items()],
                }
            )
    return {
        "campaign": campaign,
        "has_pairs": any(row.get("pairs") for row in leaderboard),
        "pair_table": pair_table(report.get("pair_breakdown")),
        "report": report,
        "leaderboard": leaderboard,
        "metric_names": metric_names,
        "has_random": any(row.get("random") for row in leaderboard),
        "has_accuracy": bool(local),
        "table": table,
        "table_rows": html_rows(table) if table else [],
        "methods": [m.capitalize() for m in METHODS],
        "breakdowns": breakdowns,
        "box_plot_svg": report.get("box_plot_svg"),
        "notes": report.get("notes", []),
        "chance": report.get("chance") or {},
        "comparisons": report.get("comparisons") or [],
    }


def pair_table(breakdown: dict | None) -> dict | None:
    """Rows: all pairs, each type with its subtypes under it, each criterion; columns: systems (a
    report has a handful of systems and a dozen subtypes: this way round the table fits a page)."""
    if not breakdown:
        return None
    systems = breakdown["systems"]
    types = sorted({t for cells in systems.values() for t in cells["per_type"]})
    subtypes = sorted({k for cells in systems.values() for k in cells["per_subtype"]})
    criteria = sorted({k for cells in systems.values() for k in cells["per_criterion"]})
    lines = [("all pairs", False, "all", None)]
    for t in types:
        lines.append((t, False, "per_type", t))
        lines += [
            (k.split("/", 1)[1].replace("_", " "), True, "per_subtype", k) for k in subtypes if k.split("/")[0] == t
        ]
    lines += [(f"criterion {k.upper()}", False, "per_criterion", k) for k in criteria]
    rows = [
        {
            "label": label,
            "key": key or part,
            "sub": sub,
            "cells": [_ranked(cells["all"] if part == "all" else cells[part].get(key)) for cells in systems.values()],
        }
        for label, sub, part, key in lines
    ]
    return {
        "pair_set": breakdown["pair_set"],
        "systems": list(systems),
        "rows": rows,
        "chance": PAIR_CHANCE,
        "min_n": MIN_PAIRS_TO_RANK,
        "ml_note": ML_PAIRS_NOTE if "ml" in criteria else "",
    }


def _ranked(cell: dict | None) -> dict | None:
    """The cell, marked too few to rank below MIN_PAIRS_TO_RANK pairs (a summary from before the
    mark has only its n)."""
    return None if cell is None else {**cell, "too_few_to_rank": (cell.get("n") or 0) < MIN_PAIRS_TO_RANK}


def report_html(campaign: Campaign) -> str:
    """The report as one self-contained HTML file (inline CSS and SVG)."""
    css_path = finders.find("css/app.css")
    css = Path(css_path).read_text(encoding="utf-8") if css_path else ""
    return render_to_string("campaigns/standalone.html", {**report_context(campaign), "css": css})
