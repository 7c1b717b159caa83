import json

import pytest

from evaluation.metrics.correlation import kendall, spearman
from evaluation.report import (
    CHOSEN,
    RANDOM,
    SPLIT_HALF,
    box_plot_svg,
    correlation_table,
    html_rows,
    random_trial_correlations,
    text_table,
)

HUMAN = {"s1": 4.0, "s2": 3.5, "s3": 3.0, "s4": 2.0, "s5": 1.0}
CHOSEN_ACC = {
    "s1": {"accuracy": 0.80, "ci_low": 0.75, "ci_high": 0.85},
    "s2": 0.70,
    "s3": 0.72,
    "s4": 0.50,
    "s5": 0.40,
}
METRICS = {s: {"BLEU-1": v, "ROUGE-L": 1 - v} for s, v in zip(HUMAN, [0.2, 0.1, 0.3, 0.15, 0.05], strict=True)}
RANDOM_CORR = [{"spearman": 0.2, "kendall": 0.1}, {"spearman": 0.6, "kendall": 0.4}, {"spearman": 0.4, "kendall": 0.3}]
SPLIT = {"spearman": {"mean": 0.87, "std": 0.02, "min": 0.8, "max": 0.9, "trials": 100, "annotators": 4}}


def full_table(**overrides):
    kwargs = dict(
        human=HUMAN,
        chosen_accuracy=CHOSEN_ACC,
        metric_scores=METRICS,
        random_correlations=RANDOM_CORR,
        split_half=SPLIT,
        resamples=200,
    )
    kwargs.update(overrides)
    return correlation_table(**kwargs)


def test_rows_come_in_table_3_order():
    names = [row["name"] for row in full_table()["rows"]]
    assert names == [CHOSEN, RANDOM, "BLEU-1", "ROUGE-L", SPLIT_HALF]


def test_the_table_is_strict_json():
    table = full_table()
    assert json.loads(json.dumps(table, allow_nan=False)) == table


def test_chosen_row_is_the_correlation_of_accuracy_with_human_scores():
    row = full_table()["rows"][0]
    accuracy = {s: (a["accuracy"] if isinstance(a, dict) else a) for s, a in CHOSEN_ACC.items()}
    assert row["spearman"]["value"] == pytest.approx(spearman(HUMAN, accuracy, resamples=0).value)
    assert row["kendall"]["p_value"] == pytest.approx(kendall(HUMAN, accuracy, resamples=0).p_value)
    assert row["spearman"]["ci_low"] <= row["spearman"]["value"] <= row["spearman"]["ci_high"]


def test_random_row_gives_mean_and_range_over_trials():
    row = full_table()["rows"][1]
    assert row["spearman"] == {"mean": pytest.approx(0.4), "min": 0.2, "max": 0.6, "trials": 3}


def test_rows_without_data_are_left_out():
    names = [row["name"] for row in correlation_table(human=HUMAN, metric_scores=METRICS, resamples=0)["rows"]]
    assert names == ["BLEU-1", "ROUGE-L"]


def test_systems_are_listed_best_human_score_first_with_accuracy_ci():
    systems = full_table()["systems"]
    assert [s["system"] for s in systems] == ["s1", "s2", "s3", "s4", "s5"]
    assert (systems[0]["ci_low"], systems[0]["ci_high"]) == (0.75, 0.85)
    assert systems[1]["ci_low"] is None


def test_html_rows_show_value_p_value_and_interval():
    rows = html_rows(full_table())
    chosen = rows[0]
    assert chosen["name"] == CHOSEN
    assert "(p=" in chosen["cells"][0] and "[" in chosen["cells"][0]
    assert rows[1]["cells"][0].startswith("0.400 mean, range [0.200, 0.600]")
    assert rows[-1]["cells"][0].startswith("0.870 ± 0.020")


def test_text_table_names_every_row_and_system():
    text = text_table(full_table())
    for name in [CHOSEN, RANDOM, "BLEU-1", "ROUGE-L", SPLIT_HALF, "s1", "s5"]:
        assert name in text


def test_random_trial_correlations_from_per_trial_accuracies():
    agreeing = {s: v / 10 for s, v in HUMAN.items()}
    reversed_ = {s: -v for s, v in HUMAN.items()}
    correlations = random_trial_correlations(HUMAN, [agreeing, reversed_])
    assert correlations[0]["spearman"] == pytest.approx(1.0)
    assert correlations[1]["kendall"] == pytest.approx(-1.0)


def test_box_plot_is_an_svg_with_a_box_per_method_and_the_chosen_dots():
    svg = box_plot_svg(RANDOM_CORR, {"spearman": 0.9, "kendall": 0.8})
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert svg.count('id="PathCollection_1"') == 1  # the CHOSEN scatter


def test_box_plot_without_trials_is_refused():
    with pytest.raises(ValueError, match="no RANDOM trial correlations"):
        box_plot_svg([], {"spearman": 0.9})


def test_box_plot_without_chosen_draws_no_dots():
    assert "PathCollection" not in box_plot_svg(RANDOM_CORR)


def test_box_plot_is_the_same_svg_for_the_same_data():
    assert box_plot_svg(RANDOM_CORR, {"spearman": 0.9}) == box_plot_svg(RANDOM_CORR, {"spearman": 0.9})
