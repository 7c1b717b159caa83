"""The reference-based report on the real Zhao et al. (2020) ratings (DSTC10 track 5 dev format)."""

import json
from collections import defaultdict

import pytest
from django.core.management import call_command

from core.wordnet import WORDNET_INSTALL_HINT, wordnet_available
from evaluation.human import NON_SYSTEMS, generation_systems, ratings_by_system, read_zhao, system_human_scores
from evaluation.metrics.correlation import split_half_bound

pytestmark = pytest.mark.shared_data

RELATIVE = "human_annotated/dstc10_track5_dev_format/dailydialog-zhao_eval.json"


@pytest.fixture(scope="module")
def zhao_path(shared_data):
    return shared_data / RELATIVE


@pytest.fixture(scope="module")
def responses(zhao_path):
    return list(read_zhao(zhao_path))


def test_the_file_holds_900_responses_to_100_contexts_rated_by_4_annotators(responses):
    assert len(responses) == 900
    assert len({r.context for r in responses}) == 100
    assert {len(r.ratings) for r in responses} == {4}
    assert all(1 <= v <= 5 for r in responses for v in r.ratings)


def test_19_generation_systems_besides_ground_truth_and_negative_sample(responses):
    systems = {r.system for r in responses}
    assert NON_SYSTEMS <= systems
    assert len(systems - NON_SYSTEMS) == 19
    assert sum(1 for _ in generation_systems(responses)) == 700


def test_human_scores_match_an_independent_reading_of_the_file(zhao_path, responses):
    raw = json.loads(zhao_path.read_text(encoding="utf-8"))
    per_system = defaultdict(list)
    for x in raw:
        ratings = x["annotations"]["appropriateness"]
        per_system[x["model"]].append(sum(ratings) / len(ratings))
    expected = {s: sum(v) / len(v) for s, v in per_system.items()}
    assert system_human_scores(ratings_by_system(responses)) == pytest.approx(expected)


def test_ground_truth_is_rated_first_and_the_negative_sample_among_the_last_two(responses):
    scores = system_human_scores(ratings_by_system(responses))
    ranking = sorted(scores, key=scores.get, reverse=True)
    assert ranking[0] == "ground-truth"
    # measured: only "S2S sample" (2.19) is rated below the random utterance (2.21)
    assert ranking.index("negative-sample") == len(ranking) - 2


def test_split_half_bound_of_the_human_ranking_is_high(responses):
    ratings = ratings_by_system(generation_systems(responses))
    bound = split_half_bound(ratings, trials=200, seed=0)
    assert bound.annotators == 4
    assert 0.85 < bound.mean <= 1.0  # measured 0.933 (Sato et al. report 0.87 on their own ratings)


@pytest.fixture(scope="module")
def report_json(zhao_path):
    if not wordnet_available():
        pytest.skip(f"WordNet is missing: {WORDNET_INSTALL_HINT}")
    from io import StringIO

    out = StringIO()
    call_command("zhao_report", str(zhao_path), "--format", "json", "--trials", "200", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.slow
def test_command_reports_every_metric_against_the_human_ranking(report_json):
    names = [row["name"] for row in report_json["rows"]]
    assert names == ["BLEU-1", "BLEU-2", "METEOR", "ROUGE-L", "Human (split-half)"]
    assert report_json["n_systems"] == 19
    for row in report_json["rows"][:4]:
        for method in ("spearman", "kendall"):
            cell = row[method]
            assert cell["n"] == 19
            assert -1 <= cell["ci_low"] <= cell["value"] <= cell["ci_high"] <= 1
            assert 0 <= cell["p_value"] <= 1


@pytest.mark.slow
def test_reference_metrics_agree_less_with_humans_than_humans_with_themselves(report_json):
    rows = {row["name"]: row for row in report_json["rows"]}
    bound = rows["Human (split-half)"]["spearman"]["mean"]
    for metric in ("BLEU-1", "BLEU-2", "METEOR", "ROUGE-L"):
        assert rows[metric]["spearman"]["value"] < bound


@pytest.mark.slow
def test_measured_correlations_stay_as_documented(report_json):
    # the numbers in the README (deterministic: library metrics, no sampling in the point values)
    rows = {row["name"]: row["spearman"]["value"] for row in report_json["rows"][:4]}
    assert rows == pytest.approx({"BLEU-1": 0.386, "BLEU-2": 0.470, "METEOR": 0.135, "ROUGE-L": 0.563}, abs=1e-3)


@pytest.mark.slow
def test_command_prints_the_text_table(zhao_path):
    if not wordnet_available():
        pytest.skip(f"WordNet is missing: {WORDNET_INSTALL_HINT}")
    from io import StringIO

    out = StringIO()
    call_command("zhao_report", str(zhao_path), "--trials", "20", stdout=out)
    text = out.getvalue()
    assert "Systems (19)" in text
    assert "ROUGE-L" in text and "Human (split-half)" in text
