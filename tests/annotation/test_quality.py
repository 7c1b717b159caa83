import json

import numpy as np
import pytest

from annotation.agreement import krippendorff_alpha, krippendorff_bootstrap
from annotation.models import Annotator, Assignment, AssignmentStatus, DatasetMembership, QualitySnapshot
from annotation.quality import AnnotatorQuality, flag, leave_one_out_agreement
from annotation.selectors_annotators import annotators_quality
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.quality import quality_refresh
from annotation.services.submission import Answer, unit_submit
from tests.factories import (
    AnnotatorFactory,
    CandidateFactory,
    DatasetFactory,
    QuestionFactory,
    attention_check_repository,
)

THRESHOLDS = {
    "check_pass_rate_min": 0.8,
    "ground_truth_ok_min": 0.7,
    "loo_agreement_min": 0.5,
    "seconds_per_response_min": 1.5,
    "identical_units_max": 0.5,
    "min_units": 3,
}


def table_of(items):
    return np.array([[it.count(v) for v in range(6)] for it in items])


def test_alpha_from_counts_equals_alpha_from_ratings():
    import krippendorff

    rng = np.random.default_rng(1)
    ratings = rng.integers(0, 6, size=(5, 300)).astype(float)
    ratings[:, :100] = ratings[0, :100]  # some agreement
    ratings[rng.random(ratings.shape) < 0.2] = np.nan  # missing scores, as adaptive stopping leaves them
    items = [[int(v) for v in col if not np.isnan(v)] for col in ratings.T]
    expected = krippendorff.alpha(reliability_data=ratings, level_of_measurement="ordinal")
    assert krippendorff_alpha(table_of(items)) == pytest.approx(expected, abs=1e-9)


def test_alpha_bootstrap_interval_brackets_the_estimate():
    rng = np.random.default_rng(2)
    items = [[int(v)] * 3 + [int(rng.integers(0, 6))] for v in rng.integers(0, 6, 200)]
    result = krippendorff_bootstrap(table_of(items), replicates=100)
    assert result["ci95"][0] <= result["alpha"] <= result["ci95"][1]
    assert result["items"] == 200


@pytest.mark.shared_data
def test_alpha_on_the_released_scores(shared_data):
    path = shared_data / "human_annotated/eval-via-selection/human_scores.jsonl"
    items = [s for line in path.open() for s in json.loads(line)]
    result = krippendorff_bootstrap(table_of(items), replicates=100)
    assert result["alpha"] == pytest.approx(0.4866, abs=0.001)
    assert result["ci95"][0] < 0.4866 < result["ci95"][1]


def test_leave_one_out_agreement_counts_scores_near_the_others_median():
    by_item = {1: [(10, 5), (11, 4), (12, 5), (13, 1)], 2: [(10, 1), (11, 1), (12, 2), (13, 5)], 3: [(10, 3), (11, 3)]}
    result = leave_one_out_agreement(by_item)
    assert result[13] == (2, 0)  # always far from the rest
    assert result[10] == (2, 2)
    assert 3 not in {k for k in result}  # item 3 has too few scores to compare


def quality(**kwargs) -> AnnotatorQuality:
    return AnnotatorQuality(annotator_id=1, label="x", blocked=False, excluded=False, **kwargs)


@pytest.mark.parametrize(
    ("measures", "expected"),
    [
        ({"units": 10, "checks": 5, "checks_passed": 2}, ["fails attention checks"]),
        ({"units": 10, "ground_truths": 10, "ground_truths_ok": 3}, ["scores ground truths low"]),
        ({"units": 10, "loo_compared": 40, "loo_agree": 10}, ["disagrees with the others"]),
        ({"units": 10, "seconds_per_response": 0.4}, ["too fast"]),
        ({"units": 10, "identical_units": 8}, ["same score for everything"]),
        ({"units": 2, "checks": 2, "checks_passed": 0}, []),  # too few units to judge
        ({"units": 10, "checks": 5, "checks_passed": 5, "ground_truths": 10, "ground_truths_ok": 9}, []),
    ],
)
def test_flags(measures, expected):
    assert flag(quality(**measures), THRESHOLDS) == expected


@pytest.fixture
def annotated(db):
    """Six questions, four annotators each: three careful ones and a careless one who gives 5 to
    everything, quickly."""
    dataset = DatasetFactory(name="qc", adaptive_stopping=False, attention_check_rate=1.0, annotators_per_item=4)
    for _ in range(6):
        question = QuestionFactory(dataset=dataset)
        for i in range(3):
            CandidateFactory(question=question, text=f"reply {question.pk}-{i}")
    attention_check_repository(dataset)
    annotation_open(dataset=dataset)
    people = {name: AnnotatorFactory(external_id=name) for name in ("careful", "second", "third", "careless")}
    for annotator in people.values():
        DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    for name, annotator in people.items():
        while (assignment := unit_next(annotator=annotator)) is not None:
            answers = {}
            for item in assignment.items:
                if name == "careless":
                    answers[item["key"]] = Answer(5)
                elif item.get("check"):
                    answers[item["key"]] = Answer(0)
                else:
                    gt = assignment.question.candidates.get(is_ground_truth=True).pk == item["candidate_id"]
                    answers[item["key"]] = Answer(5 if gt else 1)
            unit_submit(
                assignment_id=assignment.pk,
                annotator=annotator,
                answers=answers,
                duration_ms=800 if name == "careless" else 20000,
            )
    return dataset, people


def test_careless_annotators_are_flagged_and_careful_ones_not(annotated):
    dataset, people = annotated
    by_label = {q.label: q for q in annotators_quality(dataset=dataset)}
    careless, careful = by_label["imported:careless"], by_label["imported:careful"]
    assert careless.units == 6 and careless.check_pass_rate == 0
    assert set(careless.flags) == {
        "fails attention checks",
        "too fast",
        "same score for everything",
        "disagrees with the others",
    }
    assert careful.flags == [] and careful.check_pass_rate == 1 and careful.ground_truth_ok == 1


def test_quality_snapshot_holds_agreement_preview_and_chart(annotated):
    dataset, _ = annotated
    snapshot = quality_refresh(dataset=dataset)
    assert QualitySnapshot.objects.get(dataset=dataset) == snapshot
    data = snapshot.data
    assert data["agreement"]["raters"] == 4 and data["alpha"]["alpha"] is not None
    assert data["preview"]["questions"] == 6
    assert sum(data["histogram"]) == 6 * 4 * 4 and data["histogram_svg"].startswith("<svg")
    assert len(data["annotators"]) == 4


def test_blocked_annotator_with_excluded_scores_reopens_their_questions(annotated):
    from annotation.models import QuestionWork
    from annotation.services.annotators_admin import annotator_block, annotator_unblock

    dataset, people = annotated
    assert not QuestionWork.objects.filter(dataset=dataset, is_open=True).exists()
    annotator_block(annotator=people["careless"], exclude_scores=True)
    assert QuestionWork.objects.filter(dataset=dataset, is_open=True).count() == 6
    annotator_unblock(annotator=people["careless"])
    assert not QuestionWork.objects.filter(dataset=dataset, is_open=True).exists()
    assert Annotator.objects.get(pk=people["careless"].pk).is_blocked is False
    assert Assignment.objects.filter(status=AssignmentStatus.SUBMITTED).count() == 24


def test_an_annotator_who_scores_while_the_quality_is_computed_waits_for_the_next_refresh(annotated):
    """Annotation goes on while the snapshot is computed: each query sees what was committed
    before it ran, so a newcomer's first score can appear between two of its queries."""
    from django.db import connection

    from annotation.models import Candidate, Score

    dataset, people = annotated
    newcomer = AnnotatorFactory(external_id="newcomer")
    candidate = Candidate.objects.filter(question__dataset=dataset).first()
    state = {"queries": 0}

    def score_after_the_first_query(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        state["queries"] += 1
        if state["queries"] == 1:
            Score.objects.create(candidate=candidate, annotator=newcomer, value=3)
        return result

    with connection.execute_wrapper(score_after_the_first_query):
        qualities = annotators_quality(dataset=dataset)
    assert state["queries"] > 2  # the score came in between the snapshot's queries
    assert {q.label for q in qualities} == {f"imported:{name}" for name in people}
    assert "imported:newcomer" in {q.label for q in annotators_quality(dataset=dataset)}
