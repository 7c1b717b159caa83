"""Template filters of every page: JSON for raw results, and readable numbers (core.readable)."""

import json

from django import template

from core import readable

register = template.Library()


@register.filter
def as_json(value) -> str:
    """Pretty JSON for result and parameter dicts (autoescaped by the template)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@register.filter
def num(value, digits: int = readable.DIGITS) -> str:
    """A measure with three decimals (``{{ acc|num }}`` → ``0.121``; ``{{ x|num:1 }}``)."""
    return readable.number(value, int(digits))


@register.filter
def num_na(value, digits: int = readable.DIGITS) -> str:
    """A measure that may be undefined (κ of too few items): ``n/a`` for None."""
    return "n/a" if value is None else readable.number(value, int(digits))


@register.filter
def count(value) -> str:
    """A count with thousands separators (``25,794``)."""
    return readable.count(value)


@register.filter
def interval(value, digits: int = readable.DIGITS) -> str:
    """A pair as ``[0.122, 0.809]``."""
    return readable.interval(value, int(digits))


@register.filter
def percent(value, digits: int = 1) -> str:
    """A share in 0..1 as ``12.1 %``."""
    return readable.percent(value, int(digits))


@register.filter
def duration(value) -> str:
    """Seconds or a timedelta as ``3 min 12 s``."""
    return readable.duration(value)


@register.filter
def readable_rows(value) -> list[tuple[str, str]]:
    """A result dict's scalar facts as (label, text) rows."""
    return readable.summary_rows(value) if isinstance(value, dict) else []


@register.filter
def readable_tables(value) -> list[dict]:
    """A result dict's nested objects as tables (see core.readable.result_tables)."""
    return readable.result_tables(value) if isinstance(value, dict) else []


@register.filter
def item(mapping, key):
    """``mapping[key]``, or None: a view's dict looked up by a row's key in a loop
    (``{% with wait=waits|item:job.pk %}``); None too where the page has no such dict."""
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def job_starter(job) -> str:
    """Who started a job: its researcher, what started it when no person did, or the command line."""
    if job.created_by_id is not None:
        return str(job.created_by)
    return job.trigger or "command line"


@register.filter
def job_queue(job) -> str:
    """The Celery queue a job's messages go to ("–" for a kind this code no longer has)."""
    from core.job_registry import job_kind_is_registered, job_kind_queue

    return job_kind_queue(job.kind) if job_kind_is_registered(job.kind) else "–"
