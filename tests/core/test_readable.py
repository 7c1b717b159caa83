from datetime import timedelta
from pathlib import Path

import pytest
from django.template import Context, Template

from core import readable


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.12121212121212122, "0.121"), (1, "1"), (25794, "25,794"), (None, "–"), (float("nan"), "–"), (0.5, "0.500")],
)
def test_number_gives_three_decimals_to_measures_and_separators_to_counts(value, text):
    assert readable.number(value) == text


def test_interval_reads_a_pair_and_a_low_high_mapping():
    assert readable.interval([0.12200000001, 0.80912345]) == "[0.122, 0.809]"
    assert readable.interval({"low": 0.1, "high": 0.2}) == "[0.100, 0.200]"
    assert readable.interval([None, 0.2]) == "–"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (42.4, "42 s"), (192, "3 min 12 s"), (3900, "1 h 05 min"), (3 * 86400 + 7200, "3 d 2 h")],
)
def test_duration_reads_seconds_and_timedeltas(seconds, text):
    assert readable.duration(seconds) == text
    assert readable.duration(timedelta(seconds=seconds)) == text


def test_percent_of_a_share():
    assert readable.percent(0.1212) == "12.1 %"


def test_rounded_rounds_floats_anywhere_in_a_result():
    assert readable.rounded({"a": [0.123456, {"b": 2.0000001}], "n": 3}) == {"a": [0.123, {"b": 2.0}], "n": 3}


def test_summary_rows_keep_scalars_and_intervals_and_leave_nested_objects():
    rows = readable.summary_rows({"accuracy": 0.12121, "ci95": [0.1, 0.2], "questions_kept": 1200, "by": {"x": 1}})
    assert rows == [("accuracy", "0.121"), ("95 % CI", "[0.100, 0.200]"), ("questions kept", "1,200")]


def test_result_tables_turn_nested_objects_into_tables_with_readable_cells():
    tables = readable.result_tables(
        {
            "accuracy": 0.5,
            "per_source": {"bm25": {"n": 99, "rate": 0.80808, "ci95": [0.72727, 0.87878]}, "dense": {"n": 3}},
            "settings": {"threshold": 0.5, "top_k": 10},
        }
    )
    assert tables == [
        {
            "title": "per source",
            "columns": ["", "n", "rate", "95 % CI"],
            "rows": [["bm25", "99", "0.808", "[0.727, 0.879]"], ["dense", "3", "–", "–"]],
        },
        {"title": "settings", "columns": [], "rows": [["threshold", "0.500"], ["top k", "10"]]},
    ]


def test_template_filters_use_the_same_formatting():
    html = Template("{% load wellchosen %}{{ a|num }} {{ n|count }} {{ ci|interval }} {{ s|duration }}").render(
        Context({"a": 0.12121, "n": 25794, "ci": (0.1, 0.25), "s": 192})
    )
    assert html == "0.121 25,794 [0.100, 0.250] 3 min 12 s"


def test_num_na_says_n_a_for_an_undefined_measure():
    html = Template("{% load wellchosen %}{{ k|num_na }} {{ none|num_na }}").render(
        Context({"k": 0.41234, "none": None})
    )
    assert html == "0.412 n/a"


def test_no_page_formats_numbers_outside_the_shared_filters():
    # every number of every page goes through core.readable (a template doing its own rounding would
    # show 17 digits somewhere sooner or later); widthratio stays only for arithmetic, not for display
    templates = Path(__file__).resolve().parents[2] / "templates"
    offenders = [p.name for p in templates.rglob("*.html") if "floatformat" in p.read_text()]
    assert offenders == []
