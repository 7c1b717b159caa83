"""The dashboard's counts are the ones decisions use: forged crowd work, and scores of excluded
annotators, are shown apart and never in the scores, units or rate a researcher plans with."""

from django.urls import reverse

from annotation.models import Annotator, DatasetMembership, Score
from annotation.selectors import candidate_score_counts, filter_rules_current
from annotation.selectors_dataset import dataset_progress
from annotation.services.assignment import unit_next
from annotation.services.submission import Answer, unit_submit
from tests.factories import AnnotatorFactory

from .test_confirmation import forge


def counted_scores(dataset) -> int:
    """What the filter rules (and so filter_preview and the test-set build) see."""
    return sum(row["n_scores"] for row in candidate_score_counts(dataset=dataset, rules=filter_rules_current()))


def real_annotator_submits(dataset, **kwargs) -> Annotator:
    annotator = AnnotatorFactory(**kwargs)
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    assignment = unit_next(annotator=annotator)
    unit_submit(
        assignment_id=assignment.pk,
        annotator=annotator,
        answers={item["key"]: Answer(4) for item in assignment.items},
    )
    return annotator


def test_forged_crowd_work_is_not_in_the_dashboards_counts(client, published_tasks, dataset):
    # given one real unit (2 scores) and two forged MTurk submissions (2 scores each)
    real_annotator_submits(dataset)
    for n in range(1, 3):
        assert forge(client, task=published_tasks[0], n=n).status_code == 200
    assert Score.objects.count() == 6
    progress = dataset_progress(dataset=dataset)
    # then the dashboard counts what the filter rules count, and the forged work apart
    assert progress["scores"] == counted_scores(dataset) == 2
    assert progress["assignments_submitted"] == 1 and progress["units_per_hour"] == 1
    assert (progress["scores_unconfirmed"], progress["assignments_not_counted"]) == (4, 2)


def test_scores_of_an_excluded_annotator_are_shown_apart(dataset):
    real_annotator_submits(dataset)
    real_annotator_submits(dataset, scores_excluded=True)
    progress = dataset_progress(dataset=dataset)
    assert progress["scores"] == counted_scores(dataset) == 2
    assert progress["scores_excluded"] == 2
    assert progress["assignments_submitted"] == 1 and progress["units_per_hour"] == 1


def test_the_eta_counts_the_places_unconfirmed_work_holds_as_still_to_do(client, published_tasks, dataset):
    real_annotator_submits(dataset)
    before = dataset_progress(dataset=dataset)["eta_hours"]
    forge(client, task=published_tasks[0], n=1)
    # a forged unit takes a slot, but its place is still to be done: the ETA does not shrink
    assert dataset_progress(dataset=dataset)["eta_hours"] == before


def test_the_workspace_shows_unconfirmed_scores_apart(admin_client, client, published_tasks, dataset):
    real_annotator_submits(dataset)
    forge(client, task=published_tasks[0], n=1)
    page = admin_client.get(reverse("dashboard-dataset", args=[dataset.name])).content.decode()
    assert '<span class="big" id="scores">2</span>' in page
    assert "not counted yet: 2 of 1 submitted unit waiting for a crowd platform's confirmation" in page
    index = admin_client.get(reverse("dashboard")).content.decode()
    assert '<td class="num">2</td><td class="num">2</td>' in index
