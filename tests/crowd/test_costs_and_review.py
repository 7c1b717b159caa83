"""The cost planner, review suggestions from quality control, and batch jobs."""

from decimal import Decimal

import pytest

from annotation.models import Assignment
from annotation.selectors_stopping_cost import MIN_MEASURED_UNITS
from annotation.services.assignment import annotation_open
from annotation.services.submission import Answer
from core.errors import UserError
from core.models import Job
from core.services.jobs import job_create
from crowd.job_params import CrowdSyncParams
from crowd.models import CrowdAssignment
from crowd.providers.mturk_entry import mturk_enter
from crowd.selectors import crowd_cost_estimate, crowd_review_suggestions
from crowd.services.batches import crowd_batch_create
from crowd.services.work import crowd_unit_submit
from tests.factories import AnnotatorFactory, DatasetFactory, QuestionFactory

from .conftest import assignment_id, hit_id


def batch_for(dataset, **settings):
    return crowd_batch_create(dataset=dataset, provider="mturk", name="costs", settings=settings)


def test_cost_is_reward_times_assignments_plus_20_percent_commission(dataset):
    estimate = crowd_cost_estimate(batch=batch_for(dataset, reward="0.30"))
    # 2 units x K=3 x $0.30 = $1.80, + 20 % = $2.16
    assert (estimate.units, estimate.rewards, estimate.fees, estimate.total) == (
        2,
        Decimal("1.80"),
        Decimal("0.36"),
        Decimal("2.16"),
    )


def test_ten_or_more_assignments_per_hit_add_another_20_percent_and_a_warning(dataset):
    dataset.annotators_per_item = 10
    dataset.save()
    estimate = crowd_cost_estimate(batch=batch_for(dataset, reward="0.10"))
    assert estimate.fee_rate == Decimal("0.40") and estimate.total == Decimal("2.80")
    assert any("20 % extra" in w for w in estimate.warnings)


def test_planned_bonuses_are_costed_with_their_commission(dataset):
    estimate = crowd_cost_estimate(batch=batch_for(dataset, reward="0.30", bonus_per_assignment="0.10"))
    assert estimate.bonuses == Decimal("0.72")  # 6 x $0.10 x 1.2


def test_cost_per_finished_question_uses_the_filter_yield(db, scored_question):
    dataset = DatasetFactory(name="yield", annotators_per_item=5)
    scored_question(dataset=dataset, gt=[5, 5, 5, 5, 5], false=[[0, 1, 1, 1, 1]] * 3)  # kept
    scored_question(dataset=dataset, gt=[1, 1, 1, 2, 5], false=[[0, 1, 1, 1, 1]] * 3)  # dropped
    estimate = crowd_cost_estimate(batch=batch_for(dataset, reward="1.00"))
    assert estimate.expected_yield == 0.5
    assert estimate.per_finished_question == (estimate.total / 1).quantize(Decimal("0.01"))


def test_without_adaptive_stopping_every_response_is_costed_at_k_scores(dataset):
    estimate = crowd_cost_estimate(batch=batch_for(dataset, reward="0.30"))
    assert (estimate.expected_assignments_per_unit, estimate.expected_scores_per_response) == (3.0, 3.0)
    assert estimate.basis == "no adaptive stopping: every response gets K scores"


def test_with_no_closed_units_the_estimate_takes_the_default_measured_for_the_tolerance(db):
    # given a dataset stopping at 0.02 with one unit, none closed yet
    dataset = DatasetFactory(name="fresh", annotators_per_item=5, adaptive_stopping=True, stopping_tolerance=0.02)
    QuestionFactory(dataset=dataset)
    annotation_open(dataset=dataset)
    estimate = crowd_cost_estimate(batch=batch_for(dataset, reward="1.00"))
    # then bench/stopping.py's savings at 0.02 (28.9 % of the scores, 2.9 % of the annotators per unit)
    assert (estimate.expected_scores_per_response, estimate.expected_assignments_per_unit) == (3.555, 4.855)
    assert estimate.basis.startswith("default for tolerance 0.02 measured by bench/stopping.py")
    assert estimate.rewards == Decimal("4.86")  # 1 unit x 4.855 annotators x $1.00, to the cent


def test_tolerance_zero_is_costed_with_what_the_deterministic_rule_saves(db):
    # the rule alone stops a response once its decision is final: fewer than K scores, not K
    dataset = DatasetFactory(name="rule", annotators_per_item=5, adaptive_stopping=True, stopping_tolerance=0)
    estimate = crowd_cost_estimate(batch=batch_for(dataset, reward="1.00"))
    assert (estimate.expected_scores_per_response, estimate.expected_assignments_per_unit) == (3.755, 4.855)
    assert estimate.basis.startswith("default for tolerance 0 measured by bench/stopping.py")


def test_a_tolerance_between_measured_ones_takes_the_smaller_savings_below_it(db):
    dataset = DatasetFactory(name="between", annotators_per_item=5, adaptive_stopping=True, stopping_tolerance=0.07)
    estimate = crowd_cost_estimate(batch=batch_for(dataset, reward="1.00"))
    assert estimate.basis.startswith("default for tolerance 0.05 ")


def test_closed_units_that_stopped_early_lower_the_estimate_below_k(db, scored_question):
    # given a 10 % tolerance and enough units closed after two annotators (5, 5 and 1, 1)
    dataset = DatasetFactory(
        name="measured", annotators_per_item=5, adaptive_stopping=True, stopping_tolerance=0.1, spot_check_rate=0
    )
    annotators = AnnotatorFactory.create_batch(2)
    for _ in range(MIN_MEASURED_UNITS):
        scored_question(dataset=dataset, gt=[5, 5], false=[[1, 1]], annotators=annotators)
    annotation_open(dataset=dataset)
    estimate = crowd_cost_estimate(batch=batch_for(dataset, reward="1.00"))
    # then the dataset's own figures: two scores per response, two annotators per unit, not five
    assert (estimate.expected_scores_per_response, estimate.expected_assignments_per_unit) == (2.0, 2.0)
    assert estimate.basis == f"measured on this dataset's {MIN_MEASURED_UNITS} closed units (60 responses)"


def test_bad_mturk_settings_are_refused_when_the_batch_is_made(dataset):
    with pytest.raises(UserError, match="reward '0.3' must be dollars with two decimals"):
        batch_for(dataset, reward="0.3")
    with pytest.raises(UserError, match="assignment_duration_seconds"):
        batch_for(dataset, assignment_duration_seconds=5)


def test_a_failed_attention_check_suggests_rejection_with_feedback(published_tasks):
    task = published_tasks[0]
    ca = mturk_enter(
        hit_id=hit_id(1),
        assignment_id=assignment_id(1),
        worker_id="AW1",
        submit_to="https://workersandbox.mturk.com",
    )
    crowd_unit_submit(crowd_assignment=ca, answers={i["key"]: Answer(3) for i in ca.assignment.items})
    Assignment.objects.filter(pk=ca.assignment_id).update(check_passed=False)
    CrowdAssignment.objects.filter(pk=ca.pk).update(status="submitted")
    ok = mturk_enter(
        hit_id=task.external_id, assignment_id=assignment_id(2), worker_id="AW2", submit_to="https://www.mturk.com"
    )
    crowd_unit_submit(crowd_assignment=ok, answers={i["key"]: Answer(3) for i in ok.assignment.items})
    CrowdAssignment.objects.filter(pk=ok.pk).update(status="submitted")
    suggestions = {s["crowd_assignment"].external_id: s for s in crowd_review_suggestions(batch=task.batch)}
    assert suggestions[assignment_id(1)]["approve"] is False
    assert "attention check" in suggestions[assignment_id(1)]["feedback"]
    assert suggestions[assignment_id(2)]["approve"] is True


def test_the_sync_job_runs_the_provider_and_records_its_report(
    published_tasks, monkeypatch, django_capture_on_commit_callbacks
):
    from crowd.providers import mturk
    from crowd.providers.base import SyncReport

    monkeypatch.setattr(mturk.MTurkProvider, "__init__", lambda self, **kw: None)
    monkeypatch.setattr(mturk.MTurkProvider, "sync", lambda self, *, batch: SyncReport(tasks=2, seen=0))
    with django_capture_on_commit_callbacks(execute=True):
        job = job_create(params=CrowdSyncParams(batch_id=published_tasks[0].batch_id))
    job.refresh_from_db()
    assert job.status == "succeeded" and job.result["tasks"] == 2
    assert Job.objects.count() == 1


def test_batch_status_counts_tasks_and_assignments_by_status(published_tasks):
    from crowd.selectors import crowd_batch_status

    mturk_enter(hit_id=hit_id(1), assignment_id=assignment_id(1), worker_id="AW1", submit_to="https://www.mturk.com")
    status = crowd_batch_status(batch=published_tasks[0].batch)
    assert status["tasks"] == {"published": 2} and status["assignments"] == {"accepted": 1}


def test_an_internal_batch_opens_its_units_and_pays_no_bonus(dataset):
    from annotation.models import Annotator
    from crowd.models import CrowdAssignment
    from crowd.services.batches import crowd_batch_publish
    from crowd.services.review import crowd_bonus_send

    batch = crowd_batch_create(dataset=dataset, provider="internal", name="in-house")
    assert crowd_batch_publish(batch=batch) == 2  # nothing goes to a platform
    assert batch.status == "published"
    worker = Annotator.objects.create(provider="imported", external_id="x")
    ca = CrowdAssignment.objects.create(
        provider="internal", external_id="i1", batch=batch, worker=worker, status="submitted"
    )
    with pytest.raises(UserError, match="not paid through WellChosen"):
        crowd_bonus_send(crowd_assignment=ca, amount=Decimal("1"), reason="thanks")


def test_a_rating_dataset_is_described_to_mturk_workers_as_1_to_5(dataset):
    from annotation.models import DatasetTask
    from crowd.providers.mturk_settings import mturk_settings

    # given a batch on a dataset of generated responses to rate
    dataset.task = DatasetTask.RATE
    dataset.save(update_fields=["task"])
    # when its HIT settings are made, then the description asks for 1-5, not 0-5
    description = mturk_settings(batch_for(dataset))["description"]
    assert "from 1 to 5" in description and "0" not in description


def test_a_selection_dataset_keeps_the_0_to_5_description(dataset):
    from crowd.providers.mturk_settings import mturk_settings

    assert "from 0 to 5" in mturk_settings(batch_for(dataset))["description"]
