"""Response-level correlation of reference-based metrics with human ratings (Park et al. 2021, Table 2)."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from core.wordnet import WORDNET_INSTALL_HINT, load_wordnet, wordnet_available
from evaluation.human import RatedResponse
from evaluation.metrics.response_correlation import (
    RESPONSE_METRICS,
    correlate_responses,
    format_p,
    human_scores,
    load_rated_responses,
    metric_scores,
    pearson_spearman,
)

FOLDER = "human_annotated/dstc10_track5_dev_format"
X = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
Y = [1.5, 1.0, 3.5, 3.0, 6.0, 4.0]


@pytest.fixture(scope="module")
def wordnet():
    if not wordnet_available():
        pytest.skip(f"WordNet is missing: {WORDNET_INSTALL_HINT}")
    return load_wordnet()


def rated(response: str, reference: str, ratings=(3, 3, 3, 3), system: str = "S2S") -> RatedResponse:
    return RatedResponse("d", system, ("hi",), response, (reference,), tuple(ratings))


# the correlation


def test_pearson_and_spearman_match_the_hand_computed_values():
    # r = cov / (sd sd): x deviations -2.5..2.5, y mean 3.1666..; rho from the rank differences
    xs, ys = np.array(X), np.array(Y)
    dx, dy = xs - xs.mean(), ys - ys.mean()
    expected_r = (dx * dy).sum() / math.sqrt((dx**2).sum() * (dy**2).sum())
    rank_y = [2, 1, 4, 3, 6, 5]  # Y has no ties
    d2 = sum((a - b) ** 2 for a, b in zip(range(1, 7), rank_y, strict=True))
    expected_rho = 1 - 6 * d2 / (6 * (36 - 1))
    result = pearson_spearman(X, Y)
    assert result.pearson == pytest.approx(expected_r)
    assert result.spearman == pytest.approx(expected_rho)


def test_values_and_p_values_agree_with_scipy():
    result = pearson_spearman(X, Y)
    assert (result.pearson, result.pearson_p) == pytest.approx(tuple(stats.pearsonr(X, Y)))
    assert (result.spearman, result.spearman_p) == pytest.approx(tuple(stats.spearmanr(X, Y)))
    assert result.n == 6


def test_a_monotone_transform_keeps_spearman_but_not_pearson():
    squashed = [math.exp(v) for v in X]
    before, after = pearson_spearman(X, Y), pearson_spearman(squashed, Y)
    assert after.spearman == pytest.approx(before.spearman)
    assert after.pearson != pytest.approx(before.pearson, abs=1e-3)


def test_a_constant_score_is_refused_with_a_message():
    with pytest.raises(ValueError, match="constant"):
        pearson_spearman([0.0] * 5, [1, 2, 3, 4, 5])


def test_vectors_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="differ in length"):
        pearson_spearman([1, 2, 3], [1, 2, 3, 4])


def test_format_p_switches_to_exponent_below_a_thousandth():
    assert (format_p(0.0123), format_p(6.1e-11)) == ("0.012", "6.1e-11")


# per-response scores on made-up responses


def test_a_response_equal_to_its_reference_scores_one_on_bleu_and_rouge():
    scores = metric_scores([rated("how are you ?", "how are you ?")], ["BLEU-2", "ROUGE-L"])
    assert scores == {"BLEU-2": [pytest.approx(1.0)], "ROUGE-L": [pytest.approx(1.0)]}


def test_human_score_is_the_mean_annotator_rating():
    assert human_scores([rated("a", "b", ratings=(5, 4, 4, 2))]) == [3.75]


def test_a_metric_that_follows_the_ratings_correlates_positively(wordnet):
    responses = [
        rated("i am fine thanks", "i am fine thanks", ratings=(5, 5, 5, 4)),
        rated("i am fine", "i am fine thanks", ratings=(4, 4, 4, 4)),
        rated("i am tired", "i am fine thanks", ratings=(3, 3, 2, 3)),
        rated("the weather is cold", "i am fine thanks", ratings=(1, 2, 1, 1)),
    ]
    table = correlate_responses(responses, wordnet=wordnet)
    assert set(table) == set(RESPONSE_METRICS)
    assert all(c.pearson > 0.8 and c.spearman > 0.8 for c in table.values())


def test_unknown_metric_names_are_refused():
    with pytest.raises(ValueError, match="unknown metrics"):
        metric_scores([rated("a", "b")], ["BLEU-9"])


# the real Zhao et al. files


@pytest.fixture(scope="module")
def dailydialog(shared_data):
    return shared_data / FOLDER / "dailydialog-zhao_eval.json"


@pytest.fixture(scope="module")
def persona(shared_data):
    return shared_data / FOLDER / "persona-zhao_eval.json"


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("name", "without_ground_truth", "generated_only"),
    [("dailydialog", 800, 700), ("persona", 750, 600)],
)
def test_loader_leaves_out_the_ground_truth_and_keeps_the_negative_sample(
    request, name, without_ground_truth, generated_only
):
    path = request.getfixturevalue(name)
    assert len(load_rated_responses(path, exclude=())) == 900
    responses = load_rated_responses(path)
    assert len(responses) == without_ground_truth
    assert "ground-truth" not in {r.system for r in responses}
    assert len(load_rated_responses(path, exclude={"ground-truth", "negative-sample"})) == generated_only


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["dailydialog", "persona"])
def test_loader_averages_the_four_appropriateness_ratings_as_the_file_has_them(request, name):
    path = request.getfixturevalue(name)
    raw = [x for x in json.loads(path.read_text(encoding="utf-8")) if x["model"] != "ground-truth"]
    expected = [sum(x["annotations"]["appropriateness"]) / 4 for x in raw]
    responses = load_rated_responses(path)
    assert {len(r.ratings) for r in responses} == {4}
    assert human_scores(responses) == pytest.approx(expected)
    assert [r.references[0] for r in responses] == [x["reference"][0] for x in raw]


@pytest.mark.shared_data
def test_every_metric_correlates_finitely_over_the_800_dailydialog_responses(dailydialog, wordnet):
    table = correlate_responses(load_rated_responses(dailydialog), wordnet=wordnet)
    assert set(table) == set(RESPONSE_METRICS)
    for metric, c in table.items():
        assert c.n == 800, metric
        assert math.isfinite(c.pearson) and -1 <= c.pearson <= 1, metric
        assert math.isfinite(c.spearman) and -1 <= c.spearman <= 1, metric
        assert 0 <= c.pearson_p <= 1 and 0 <= c.spearman_p <= 1, metric
    # measured (docs/evaluation.md); Park et al. report r .08 / .11 / .12
    assert {m: round(table[m].pearson, 3) for m in ("BLEU-2", "METEOR", "ROUGE-L")} == {
        "BLEU-2": 0.089,
        "METEOR": 0.087,
        "ROUGE-L": 0.107,
    }
