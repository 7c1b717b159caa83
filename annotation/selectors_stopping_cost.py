"""What stopping is expected to save a dataset: scores per response and annotators per unit (what a
crowd platform bills), for the cost planner.

Measured on the dataset's own closed units once it has MIN_MEASURED_UNITS of them; before that, the
savings bench/stopping.py measured for the dataset's tolerance. A unit takes annotators until its
last response stops, so it saves far less than its responses do (Sato et al. at 0.02: 44.4 % of
the scores, 18.0 % of the annotators).
"""

from dataclasses import dataclass

from django.db import connection

from annotation.models import Annotator, Candidate, Dataset, QuestionWork, Score

# Closed units needed before the dataset's own figures replace the defaults below.
MIN_MEASURED_UNITS = 30
# `bench/stopping.py --orders 1000` (2026-11-28), mean over annotator orders: per tolerance, the
# share of scores and of annotators per unit saved, the lower of Sato et al.'s (filtered, K = 5,
# 4 responses) and Zhao et al.'s (unfiltered, K = 4, 9 responses) so as not to under-budget. A
# tolerance between two rows takes the lower row's (smaller) savings.
MEASURED_SAVINGS = (
    (0.0, 0.249, 0.029),
    (0.005, 0.261, 0.029),
    (0.01, 0.275, 0.029),
    (0.02, 0.289, 0.029),
    (0.03, 0.289, 0.029),
    (0.05, 0.289, 0.029),
    (0.08, 0.348, 0.050),
    (0.1, 0.406, 0.074),
    (0.15, 0.483, 0.132),
)


@dataclass(frozen=True, slots=True)
class StoppingCost:
    scores_per_response: float
    assignments_per_unit: float
    basis: str  # where the two figures come from, in words


def stopping_cost_expected(*, dataset: Dataset) -> StoppingCost:
    """Expected scores per response and annotators per unit under the dataset's stopping."""
    k = dataset.annotators_per_item
    if not dataset.stops_adaptively:
        return StoppingCost(float(k), float(k), "no adaptive stopping: every response gets K scores")
    units, responses, scores, annotators = _closed_units(dataset=dataset)
    if units >= MIN_MEASURED_UNITS:
        return StoppingCost(
            round(scores / responses, 2),
            round(annotators / units, 2),
            f"measured on this dataset's {units:,} closed units ({responses:,} responses)",
        )
    tolerance, scores_saved, units_saved = max(row for row in MEASURED_SAVINGS if row[0] <= dataset.stopping_tolerance)
    return StoppingCost(
        round(k * (1 - scores_saved), 3),
        round(k * (1 - units_saved), 3),
        f"default for tolerance {tolerance:g} measured by bench/stopping.py (fewer than "
        f"{MIN_MEASURED_UNITS} closed units here: {units})",
    )


def _closed_units(*, dataset: Dataset) -> tuple[int, int, int, int]:
    """Of the dataset's closed units: how many, their responses, their counted scores, and the sum
    over units of the most scores any of its responses got (the annotators it took)."""
    candidate, score, annotator = Candidate._meta.db_table, Score._meta.db_table, Annotator._meta.db_table
    sql = f"""
        SELECT COUNT(*), COALESCE(SUM(responses), 0), COALESCE(SUM(scores), 0), COALESCE(SUM(most), 0) FROM (
            SELECT COUNT(*) AS responses, SUM(n) AS scores, MAX(n) AS most FROM (
                SELECT c.question_id AS question_id, COUNT(s.id) AS n FROM {candidate} c
                LEFT JOIN {score} s ON s.candidate_id = c.id AND s.counted
                  AND s.annotator_id IN (SELECT id FROM {annotator} WHERE NOT scores_excluded)
                WHERE c.question_id IN (
                    SELECT question_id FROM {QuestionWork._meta.db_table} WHERE dataset_id = %s AND NOT is_open
                )
                GROUP BY c.id, c.question_id
            ) per_response GROUP BY question_id
        ) per_unit"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [dataset.pk])
        units, responses, scores, most = cursor.fetchone()
    return int(units), int(responses), int(scores), int(most)
