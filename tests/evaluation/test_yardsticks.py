"""Every accuracy with its yardstick: chance beside it, and whether two systems' difference is real."""

import math

import pytest
from django.urls import reverse

from evaluation.metrics.accuracy import chance_accuracy, paired_comparison, questions_needed
from evaluation.models import Evaluation, QuestionResult

from .test_campaign_report import page, reported  # noqa: F401  (the fixture)


def test_chance_is_one_over_the_candidates_per_question():
    assert chance_accuracy([4, 4, 2]) == pytest.approx((0.25 + 0.25 + 0.5) / 3)
    assert chance_accuracy([]) is None


def test_the_paired_test_reads_only_the_questions_one_system_got_right():
    # 8 questions both right or both wrong say nothing; 6 to 1 discordant ones decide
    first = [True] * 4 + [False] * 4 + [True] * 6 + [False]
    second = [True] * 4 + [False] * 4 + [False] * 6 + [True]
    result = paired_comparison(first, second)
    assert (result["only_first"], result["only_second"], result["questions"]) == (6, 1, 15)
    assert result["p_value"] == pytest.approx(2 * (1 + 7) / 2**7)  # two-sided binomial, 1 of 7 at 1/2
    assert not result["significant"] and result["difference"] == pytest.approx(5 / 15)


def test_a_large_enough_difference_is_significant():
    first, second = [True] * 20 + [False] * 5, [False] * 20 + [False] * 5
    result = paired_comparison(first, second)
    assert result["significant"] and result["p_value"] < 1e-5


def test_questions_needed_follows_connor():
    # discordance 0.5 and difference 0.5 on 4 questions: (1.960 * sqrt(.5) + 0.842 * sqrt(.25))^2 / .25
    expected = math.ceil((1.959964 * math.sqrt(0.5) + 0.841621 * math.sqrt(0.25)) ** 2 / 0.25)
    assert questions_needed(2, 0, 4) == expected == 14
    assert questions_needed(3, 3, 10) is None  # no difference: no test set is large enough


def test_an_evaluation_records_chance_beside_its_accuracy(reported):  # noqa: F811
    summaries = list(Evaluation.objects.values_list("summary", flat=True))
    assert summaries and all(s["chance"] == pytest.approx(0.25) for s in summaries)  # 1 ground truth + 3 false


def test_the_campaign_report_says_chance_and_compares_neighbours(admin_client, reported):  # noqa: F811
    report = reported.report
    assert report["chance"] == {"chosen": pytest.approx(0.25), "random": pytest.approx(0.25), "pairs": None}
    ranked = sorted(
        ((row["accuracy"], row["system"]) for row in report["leaderboard"] if row["accuracy"] is not None),
        key=lambda pair: (-pair[0], pair[1]),
    )
    assert [(c["first"], c["second"]) for c in report["comparisons"]] == [
        (a[1], b[1]) for a, b in zip(ranked, ranked[1:], strict=False)
    ]
    # the comparison reads the stored per-question results
    first = report["comparisons"][0]
    rights = {
        name: dict(QuestionResult.objects.filter(evaluation__system__name=name).values_list("item_id", "correct"))
        for name in (first["first"], first["second"])
    }
    only_first = sum(1 for i, right in rights[first["first"]].items() if right and not rights[first["second"]][i])
    assert first["only_first"] == only_first
    html = page(admin_client, reported)
    assert 'id="chance"' in html and "0.250 on CHOSEN" in html
    assert 'id="comparisons"' in html and "McNemar" in html


def test_a_difference_that_six_questions_cannot_settle_is_noted(reported):  # noqa: F811
    unclear = [c for c in reported.report["comparisons"] if not c["significant"]]
    assert unclear, "six questions settle nothing"
    assert any("the difference is not significant" in note for note in reported.report["notes"])


def test_the_workspace_shows_each_evaluations_interval_and_chance(admin_client, reported):  # noqa: F811
    html = admin_client.get(reverse("dashboard-dataset", args=[reported.testset.dataset.name])).content.decode()
    table = html.split('id="evaluations"')[1].split("</table>")[0]
    assert "Chance" in table and "0.250" in table and '<span class="muted">[' in table
