import json

import numpy as np
import pytest

from annotation.agreement import agreement_summary, binary_table, fleiss_from_table
from annotation.models import Score
from annotation.selectors import dataset_agreement, filter_preview, filter_rules_current, score_category_table


def independent_fleiss(ratings: list[list[int]], categories) -> float:
    """Fleiss (1971) written out from the definition, for a cross-check."""
    n_items, n_raters = len(ratings), len(ratings[0])
    totals = {c: 0 for c in categories}
    agreement = 0.0
    for item in ratings:
        counts = {c: 0 for c in categories}
        for value in item:
            counts[value] += 1
            totals[value] += 1
        agreement += (sum(v * v for v in counts.values()) - n_raters) / (n_raters * (n_raters - 1))
    p_bar = agreement / n_items
    p_e = sum((t / (n_items * n_raters)) ** 2 for t in totals.values())
    return (p_bar - p_e) / (1 - p_e)


def table_of(ratings: list[list[int]]) -> np.ndarray:
    return np.array([[item.count(v) for v in range(6)] for item in ratings])


def test_the_kappa_equals_the_textbook_formula_on_random_ratings():
    rng = np.random.default_rng(0)
    ratings = rng.integers(0, 6, size=(200, 5)).tolist()
    ratings[:50] = [[r[0]] * 5 for r in ratings[:50]]  # some agreement
    assert fleiss_from_table(table_of(ratings)) == pytest.approx(independent_fleiss(ratings, range(6)), abs=1e-12)
    binary = [[int(v > 3) for v in item] for item in ratings]
    assert fleiss_from_table(binary_table(table_of(ratings))) == pytest.approx(
        independent_fleiss(binary, (0, 1)), abs=1e-12
    )


def test_the_kappa_is_statsmodels_fleiss_kappa():
    from statsmodels.stats.inter_rater import fleiss_kappa

    # given tables of 2 to 7 raters over six categories and over two classes, one with a category
    # nobody chose and one on which everybody agrees on one category (no kappa)
    rng = np.random.default_rng(1)
    tables = []
    for raters in range(2, 8):
        table = table_of(rng.integers(0, 6, size=(300, raters)).tolist())
        tables += [table, binary_table(table)]
    tables += [table_of(rng.integers(1, 6, size=(50, 5)).tolist()), table_of([[3] * 5] * 4)]
    for table in tables:
        # when ours and statsmodels' compute it
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = float(fleiss_kappa(table, method="fleiss"))
        got = fleiss_from_table(table)
        # then they are the same number (or both none)
        assert (got is None and np.isnan(expected)) or got == expected


def test_perfect_agreement_is_one():
    assert fleiss_from_table(table_of([[5] * 5, [1] * 5, [0] * 5])) == pytest.approx(1.0)


def test_items_with_another_number_of_raters_are_left_out():
    table = np.vstack([table_of([[5] * 5, [1] * 5, [2, 2, 2, 2, 1]]), [[0, 3, 0, 0, 0, 0]]])
    summary = agreement_summary(table)
    assert (summary["items"], summary["raters"], summary["items_skipped"]) == (3, 5, 1)


def test_no_scores_give_no_kappa():
    assert agreement_summary(np.zeros((0, 6), dtype=int))["fleiss_kappa_6"] is None


def test_category_table_is_aggregated_per_candidate(db, scored_question, django_assert_num_queries):
    scored_question(gt=[5, 5, 4, 0, 5], false=[[1, 1, 2, 1, 1]])
    with django_assert_num_queries(1):
        table = score_category_table(scores=Score.objects.all())
    assert table.tolist() == [[1, 0, 0, 0, 1, 3], [0, 4, 1, 0, 0, 0]]


@pytest.mark.shared_data
def test_released_scores_reproduce_the_papers_kappa(sato_dataset):
    # given the 1,019 released questions x 4 responses x 5 annotators
    dataset, scores_path = sato_dataset
    # when agreement is computed from the database
    summary = dataset_agreement(dataset=dataset)
    # then it matches Sato et al.'s Table 1 (0.22 six-class, 0.63 binary) within 0.02
    assert (summary["items"], summary["raters"]) == (4076, 5)
    assert summary["fleiss_kappa_6"] == pytest.approx(0.22, abs=0.02)
    assert summary["fleiss_kappa_2"] == pytest.approx(0.63, abs=0.02)
    # and equals an independent computation straight from the file
    ratings = [item for line in scores_path.open() for item in json.loads(line)]
    assert summary["fleiss_kappa_6"] == pytest.approx(independent_fleiss(ratings, range(6)), abs=1e-6)
    binary = [[int(v > 3) for v in item] for item in ratings]
    assert summary["fleiss_kappa_2"] == pytest.approx(independent_fleiss(binary, (0, 1)), abs=1e-6)


@pytest.mark.shared_data
def test_every_released_question_passes_the_default_rules(sato_dataset):
    dataset, _ = sato_dataset
    preview = filter_preview(dataset=dataset, rules=filter_rules_current())
    assert preview.questions == 1019
    assert preview.questions_by_ground_truth == {"passed": 1019, "rejected": 0, "undecided": 0}
    assert preview.candidates_by_decision == {"kept": 3057, "acceptable": 0, "ungrammatical": 0, "undecided": 0}
    assert preview.buildable_questions == 1019
