"""Numbers as people read them: the one formatting of every page, admin view and command report.

Measures (accuracies, κ, correlations, retriever scores) get three decimals, counts thousands
separators, intervals ``[a, b]``, durations ``1 h 05 min``. Templates use the filters of
``core.templatetags.wellchosen`` (``num``, ``count``, ``interval``, ``duration``, ``percent``,
``readable``); Python code calls these functions.
"""

import math
from collections.abc import Mapping, Sequence
from datetime import timedelta
from numbers import Number
from typing import Any

MISSING = "–"
DIGITS = 3


def number(value: Any, digits: int = DIGITS) -> str:
    """A measure: ``0.121`` for 0.12121212, an int as a count; ``–`` for None or NaN."""
    if value is None or isinstance(value, bool) or not isinstance(value, Number):
        return MISSING if value is None else str(value)
    if isinstance(value, int):
        return count(value)
    if math.isnan(value):
        return MISSING
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits}f}"


def count(value: Any) -> str:
    """``25,794``; a float that is a whole number is shown as one."""
    if value is None:
        return MISSING
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return number(value)


def interval(value: Any, digits: int = DIGITS) -> str:
    """``[0.122, 0.809]`` from a pair (list, tuple or ``{"low", "high"}``); ``–`` without one."""
    if isinstance(value, Mapping):
        value = (value.get("low"), value.get("high"))
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
        return MISSING
    low, high = value
    if low is None or high is None:
        return MISSING
    return f"[{number(low, digits)}, {number(high, digits)}]"


def percent(value: Any, digits: int = 1) -> str:
    """A share in 0..1 as ``12.1 %``."""
    if value is None or not isinstance(value, Number) or isinstance(value, bool) or math.isnan(value):
        return MISSING
    return f"{value * 100:.{digits}f} %"


def duration(value: Any) -> str:
    """Seconds (or a timedelta) as ``42 s``, ``3 min 12 s``, ``1 h 05 min``, ``2 d 4 h``."""
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if value is None or not isinstance(value, Number) or isinstance(value, bool) or math.isnan(value):
        return MISSING
    seconds = max(0, round(value))
    if seconds < 60:
        return f"{seconds} s" if seconds or value == 0 else "< 1 s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def rounded(value: Any, digits: int = DIGITS) -> Any:
    """A JSON value with every float rounded to ``digits`` decimals (results shown as data)."""
    if isinstance(value, float):
        return value if math.isnan(value) or math.isinf(value) else round(value, digits)
    if isinstance(value, Mapping):
        return {key: rounded(item, digits) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(item, digits) for item in value]
    return value


_LABELS = {"ci95": "95 % CI", "ci": "CI"}


def label(key: str) -> str:
    """A result key as words: ``questions_kept`` → ``questions kept``, ``ci95`` → ``95 % CI``."""
    return _LABELS.get(str(key), str(key).replace("_", " "))


def summary_rows(result: Mapping, digits: int = DIGITS) -> list[tuple[str, str]]:
    """The scalar facts of a result dict as (label, text) rows, in the dict's order: numbers
    formatted, pairs of numbers as intervals; nested objects and long lists are left to the JSON."""
    rows = []
    for key, value in result.items():
        if isinstance(value, bool):
            rows.append((label(key), "yes" if value else "no"))
        elif isinstance(value, Number) or value is None:
            rows.append((label(key), number(value, digits)))
        elif isinstance(value, str) and len(value) <= 200:
            rows.append((label(key), value))
        elif isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, Number) for v in value):
            rows.append((label(key), interval(value, digits)))
    return rows


def text(value: Any, digits: int = DIGITS) -> str:
    """Any scalar of a result as read: a measure, a count, ``[a, b]`` for a pair of numbers, yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, Number) for v in value):
        return interval(value, digits)
    if isinstance(value, Number) or value is None:
        return number(value, digits)
    return str(value)


def result_tables(result: Mapping, digits: int = DIGITS) -> list[dict]:
    """The nested objects of a result as tables (what ``summary_rows`` leaves out):
    ``{"per_source": {"bm25": {"n": 40, "rate": 0.8, "ci95": [...]}, ...}}`` becomes a table titled
    "per source" with a row per source and a column per key; an object of scalars becomes a
    two-column table. Each: ``{"title", "columns", "rows"}`` (rows: label then cells, all text)."""
    tables = []
    for key, value in result.items():
        if not isinstance(value, Mapping) or not value:
            continue
        if all(isinstance(v, Mapping) for v in value.values()):
            columns: list[str] = []
            for inner in value.values():
                columns += [k for k, v in inner.items() if k not in columns and not isinstance(v, Mapping | list)]
            columns += [k for inner in value.values() for k, v in inner.items() if _is_pair(v) and k not in columns]
            rows = [[str(name), *(text(inner.get(c), digits) for c in columns)] for name, inner in value.items()]
            tables.append({"title": label(key), "columns": ["", *(label(c) for c in columns)], "rows": rows})
        else:
            rows = [[name, cell] for name, cell in summary_rows(value, digits)]
            if rows:
                tables.append({"title": label(key), "columns": [], "rows": rows})
    return tables


def _is_pair(value: Any) -> bool:
    return isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, Number) for v in value)
