"""The stopping summary counted per state in the database equals the same summary made response by response."""

import pytest

from annotation.rules import FalseDecision
from annotation.selectors import _dataset_score_counts, dataset_stopping_summary, filter_rules_current
from annotation.selectors_stopping import decider_get
from tests.factories import AnnotatorFactory, DatasetFactory


def summary_per_response(*, dataset, rules) -> dict:
    """The summary as it was made before it was counted in SQL: every response's state in Python."""
    decider = decider_get(dataset=dataset, rules=rules, fresh=True)
    decided = early = by_model = 0
    expected = 0.0
    for row in _dataset_score_counts(dataset=dataset, rules=rules):
        state = decider.state(row)
        if state.decision == FalseDecision.UNDECIDED:
            continue
        decided += 1
        early += row["n_scores"] < dataset.annotators_per_item
        by_model += state.early
        expected += state.change
    return {
        "decisions": decided,
        "decisions_on_fewer_scores": early,
        "decisions_by_model": by_model,
        "expected_changed": round(expected / decided, 5) if decided else 0.0,
    }


@pytest.mark.parametrize("tolerance, spot_check_rate", [(0.0, 0.0), (0.1, 0.0), (0.1, 0.5)])
def test_the_summary_counted_per_state_equals_the_one_made_per_response(
    db, scored_question, tolerance, spot_check_rate
):
    # given responses of every kind: complete, stopped by the model, decided early by the rule,
    # undecided, a rejected ground truth, and (spot_check_rate 0.5) spot checks among them
    dataset = DatasetFactory(name="mixed", stopping_tolerance=tolerance, spot_check_rate=spot_check_rate)
    annotators = AnnotatorFactory.create_batch(5)
    patterns = [[1, 1], [0, 0, 0], [4, 4, 4], [3, 1], [5], [1, 1, 2, 1, 1], [4, 4, 5, 1, 2], [2, 5, 3]]
    for i in range(12):
        gt = [[5, 5, 4, 5, 5], [5, 5], [1, 1, 1], [2, 5]][i % 4]
        scored_question(dataset=dataset, gt=gt, false=patterns[i % 3 :: 2], annotators=annotators)
    rules = filter_rules_current()
    expected = summary_per_response(dataset=dataset, rules=rules)
    assert expected["decisions_by_model"] > 0 or tolerance == 0  # the model did stop some
    summary = dataset_stopping_summary(dataset=dataset, rules=rules)
    assert {key: summary[key] for key in expected} == expected
