"""The "rate this response 1-5" task (Dataset.task == RATE): the annotator and crowd pages show the
1-5 scale, submissions take 1-5 only, every response gets all its ratings (no adaptive stopping),
and the test-set tools refuse the dataset."""

import re

import pytest
from django.urls import reverse

from annotation.models import Annotator, Assignment, CandidateSource, DatasetMembership, DatasetTask, Score
from annotation.selectors import filter_rules_current, question_open_candidates
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.quality import _histogram_svg, quality_refresh
from annotation.services.score_import import scores_import
from annotation.services.submission import Answer, unit_submit
from core.errors import ImportFileError, UserError
from tests.factories import (
    AnnotatorFactory,
    CandidateFactory,
    DatasetFactory,
    QuestionFactory,
    UserFactory,
    attention_check_repository,
)
from testsets.services.build import testset_build


def rating_dataset(name="rate", *, questions=1, **fields):
    """A rating dataset as evaluation.services.human_ratings builds it: the reference as ground
    truth and two generated responses per question. Adaptive stopping is left on (the model's
    default) to show that it never applies."""
    fields = {"task": DatasetTask.RATE, "attention_check_rate": 0, "annotators_per_item": 3, **fields}
    dataset = DatasetFactory(name=name, **fields)
    for _ in range(questions):
        question = QuestionFactory(dataset=dataset)
        for i in range(2):
            CandidateFactory(
                question=question, text=f"Generated {question.pk}-{i}.", source=CandidateSource.SYSTEM_RESPONSE
            )
    annotation_open(dataset=dataset)
    return dataset


@pytest.fixture
def rating(db, client):
    dataset = rating_dataset()
    user = UserFactory(username="rater")
    annotator = Annotator.objects.create(user=user, provider="internal", external_id="rater")
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    client.force_login(user)
    return dataset, annotator


def unit_url(html: str) -> str:
    """The unit's own URL, where its form posts (the next unit is shown at /annotate/ itself)."""
    return re.search(r'action="([^"]+)"[^>]*id="unit-form"', html).group(1)


def unit_page(client):
    response = client.get(reverse("annotate-next"), follow=True)
    assert response.status_code == 200
    return response, response.content.decode()


def keys(html: str) -> list[str]:
    return re.findall(r'name="score-([0-9a-f]+)" value="1"', html)


def test_the_unit_page_shows_the_1_to_5_scale_and_no_0(client, rating):
    _, html = unit_page(client)
    for key in keys(html):
        assert re.findall(rf'name="score-{key}" value="(\d)"', html) == ["5", "4", "3", "2", "1"]
    assert len(keys(html)) == 3
    assert "Rate each response" in html and "How to rate" in html
    assert "a very good, appropriate response to this context" in html and "Not appropriate at all" in html
    assert "Ungrammatical" not in html and "<dt>0</dt>" not in html
    assert "<kbd>1</kbd>–<kbd>5</kbd>" in html


def test_a_selection_dataset_keeps_its_0_to_5_scale(client, db):
    dataset = DatasetFactory(name="select", attention_check_rate=0)
    CandidateFactory(question=QuestionFactory(dataset=dataset))
    annotation_open(dataset=dataset)
    user = UserFactory(username="scorer")
    annotator = Annotator.objects.create(user=user, provider="internal", external_id="scorer")
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    client.force_login(user)
    _, html = unit_page(client)
    assert "How to score" in html and "Ungrammatical" in html and "<kbd>0</kbd>–<kbd>5</kbd>" in html
    assert "Rate each response" not in html


def test_nothing_in_the_page_reveals_the_reference(client, rating):
    dataset, _ = rating
    _, html = unit_page(client)
    question = dataset.questions.get()
    assert question.ground_truth in html  # rated like the responses ...
    assert "ground" not in html.lower() and "candidate" not in html.lower() and "reference" not in html.lower()
    # ... under random keys, in a shuffled order, with no candidate id anywhere
    assert all(re.fullmatch(r"[0-9a-f]{8}", k) for k in keys(html))
    attributes = re.findall(r'(?:id|name|value|class|data-[\w-]+)="([^"]*)"', re.sub(r'type="radio"[^>]*>', "", html))
    numbered = [
        m.group(1) for a in attributes if (m := re.fullmatch(r"[A-Za-z_-]*(\d+)", a)) and not a.startswith("response-")
    ]
    assert not {str(pk) for pk in question.candidates.values_list("id", flat=True)} & set(numbered)


def test_a_0_is_refused_with_a_clear_error(client, rating):
    response, html = unit_page(client)
    url = unit_url(html)
    again = client.post(url, {f"score-{k}": "0" for k in keys(html)})
    assert again.status_code == 400
    assert "score 0 is not an integer from 1 to 5" in again.content.decode()
    assert not Score.objects.exists()


def test_ratings_from_1_to_5_are_stored(client, rating):
    response, html = unit_page(client)
    url = unit_url(html)
    posted = dict(zip(keys(html), ["1", "3", "5"], strict=True))
    done = client.post(url, {f"score-{k}": v for k, v in posted.items()}, follow=True)
    assert "Nothing left to score" in done.content.decode()
    assert sorted(Score.objects.values_list("value", flat=True)) == [1, 3, 5]


@pytest.mark.parametrize(
    "task, value, error",
    [
        (DatasetTask.RATE, 0, "score 0 is not an integer from 1 to 5"),
        (DatasetTask.RATE, 6, "score 6 is not an integer from 1 to 5"),
        (DatasetTask.RATE, 1, None),
        (DatasetTask.RATE, 5, None),
        (DatasetTask.SELECT, 0, None),
        (DatasetTask.SELECT, 6, "score 6 is not an integer from 0 to 5"),
    ],
)
def test_the_scale_is_checked_on_submission(db, task, value, error):
    dataset = rating_dataset(task=task)
    annotator = AnnotatorFactory()
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    assignment = unit_next(annotator=annotator)
    submit = lambda: unit_submit(  # noqa: E731
        assignment_id=assignment.pk,
        annotator=annotator,
        answers={item["key"]: Answer(value) for item in assignment.items},
    )
    if error:
        with pytest.raises(UserError, match=error):
            submit()
        assert not Score.objects.exists()
    else:
        submit()
        assert set(Score.objects.values_list("value", flat=True)) == {value}


def rate_ground_truth_low(dataset, n: int):
    """``n`` annotators give the ground truth 1 and the responses 2: for a test set, a rejected question."""
    for annotator in AnnotatorFactory.create_batch(n):
        DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
        assignment = unit_next(annotator=annotator)
        ground_truth = assignment.question.candidates.get(is_ground_truth=True).pk
        unit_submit(
            assignment_id=assignment.pk,
            annotator=annotator,
            answers={i["key"]: Answer(1 if i["candidate_id"] == ground_truth else 2) for i in assignment.items},
        )


@pytest.mark.parametrize("task, still_open", [(DatasetTask.SELECT, 0), (DatasetTask.RATE, 3)])
def test_adaptive_stopping_never_applies_to_rating(db, task, still_open):
    # given a dataset with the adaptive-stopping flag on and five ratings planned per response
    dataset = rating_dataset(task=task, adaptive_stopping=True, annotators_per_item=5)
    question = dataset.questions.get()
    # when three annotators rate the ground truth low (enough to drop a question from a test set)
    rate_ground_truth_low(dataset, 3)
    # then a selection dataset stops there, while a rating dataset still needs all its ratings
    open_ids = question_open_candidates(question_id=question.pk, dataset=dataset, rules=filter_rules_current())
    assert len(open_ids) == still_open
    assert dataset.work.get().is_open is bool(still_open)
    assert dataset.stops_adaptively is (task == DatasetTask.SELECT)


def test_every_response_of_a_rating_dataset_gets_every_rating(db):
    dataset = rating_dataset(adaptive_stopping=True, annotators_per_item=4)
    rate_ground_truth_low(dataset, 4)
    assert not dataset.work.get().is_open
    assert [c.scores.count() for c in dataset.questions.get().candidates.all()] == [4, 4, 4]


@pytest.mark.parametrize("value, passed", [(1, True), (2, False), (5, False)])
def test_the_attention_check_expects_the_lowest_rating(db, value, passed):
    # given units that always carry an unrelated response (an utterance of a repository)
    dataset = rating_dataset(questions=2, attention_check_rate=1.0)
    attention_check_repository(dataset)
    annotator = AnnotatorFactory()
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    assignment = unit_next(annotator=annotator)
    assert sum(1 for i in assignment.items if i.get("check")) == 1
    # when it is rated ``value`` and the responses 4
    answers = {i["key"]: Answer(value if i.get("check") else 4) for i in assignment.items}
    unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers)
    # then the check passes only at 1, the bottom of the 1-5 scale; the check is no score
    assignment.refresh_from_db()
    assert (assignment.check_value, assignment.check_passed) == (value, passed)
    assert Score.objects.count() == 3 and set(Score.objects.values_list("value", flat=True)) == {4}


def test_building_a_test_set_from_a_rating_dataset_is_refused(db):
    rating_dataset()
    with pytest.raises(UserError, match="'rate' rates generated responses 1-5"):
        testset_build(dataset_name="rate", name="never")


def test_building_candidate_pools_for_a_rating_dataset_is_refused(db):
    from retrieval.services.pools import pools_build

    rating_dataset()
    with pytest.raises(UserError, match="takes no retrieved candidates"):
        pools_build(dataset_name="rate", repository_name="any")


def test_quality_snapshot_has_no_filter_preview_and_a_1_to_5_histogram(db):
    dataset = rating_dataset()
    rate_ground_truth_low(dataset, 2)
    data = quality_refresh(dataset=dataset).data
    assert data["preview"] is None
    assert data["histogram"] == [0, 2, 4, 0, 0, 0]  # indexed by score
    # five bars instead of six
    bars = lambda svg: len(re.findall(r'<g id="patch_\d+">', svg))  # noqa: E731
    assert bars(data["histogram_svg"]) == bars(_histogram_svg(data["histogram"])) - 1


def test_the_dashboard_shows_adaptive_stopping_off_and_no_test_set_yield(admin_client, db):
    dataset = rating_dataset(adaptive_stopping=True)
    quality_refresh(dataset=dataset)
    html = admin_client.get(reverse("dashboard-dataset", args=[dataset.name])).content.decode()
    assert re.search(r'id="adaptive-saved">off<', html)
    assert "Adaptive stopping is off" in html and "Rating generated responses 1–5" in html
    assert "Test set yield" not in html and "Build a test set" not in html and 'id="step-releases"' not in html
    assert 'id="rating-note"' in html
    assert "Fleiss' κ, 5 categories (1–5)" in html  # 0 is never given: kappa over the five used


def test_the_dashboard_of_a_selection_dataset_is_unchanged(admin_client, db):
    dataset = rating_dataset(task=DatasetTask.SELECT, adaptive_stopping=True)
    quality_refresh(dataset=dataset)
    html = admin_client.get(reverse("dashboard-dataset", args=[dataset.name])).content.decode()
    assert "Adaptive stopping is on" in html and "Test set yield" in html and 'id="step-releases"' in html
    assert 'id="rating-note"' not in html and 'id="adaptive-saved"' not in html
    assert "Fleiss' κ, 6 categories (0–5)" in html


def test_the_admin_shows_adaptive_stopping_off_and_keeps_it_off(admin_client, db):
    dataset = rating_dataset(adaptive_stopping=True)
    url = reverse("admin:annotation_dataset_change", args=[dataset.pk])
    html = admin_client.get(url).content.decode()
    assert "off (rating generated responses" in html and 'name="adaptive_stopping"' not in html
    form = {
        "name": dataset.name,
        "description": "",
        "annotators_per_item": 3,
        "context_turns": 3,
        "lease_minutes": 30,
        "attention_check_rate": 0,
        "error_labels": "[]",
        "task": DatasetTask.RATE,
    }
    assert admin_client.post(url, form).status_code == 302
    dataset.refresh_from_db()
    assert dataset.adaptive_stopping is False


def test_the_task_of_an_existing_dataset_cannot_be_changed_in_the_admin(admin_client, db):
    # given a rating dataset, when a researcher posts its change form with another task
    dataset = rating_dataset()
    url = reverse("admin:annotation_dataset_change", args=[dataset.pk])
    assert 'name="task"' not in admin_client.get(url).content.decode()
    form = {
        "name": dataset.name,
        "description": "",
        "annotators_per_item": 3,
        "context_turns": 3,
        "lease_minutes": 30,
        "attention_check_rate": 0,
        "error_labels": "[]",
        "task": DatasetTask.SELECT,
    }
    admin_client.post(url, form)
    # then it is still a rating dataset
    dataset.refresh_from_db()
    assert dataset.task == DatasetTask.RATE


@pytest.mark.parametrize("view", ["preview", "build", "pools"])
def test_the_admin_test_set_tools_refuse_a_rating_dataset(admin_client, db, view):
    dataset = rating_dataset()
    response = admin_client.get(reverse(f"admin:annotation_dataset_{view}", args=[dataset.pk]), follow=True)
    assert "rates generated responses 1-5" in response.content.decode()
    assert response.redirect_chain[-1][0] == reverse("admin:annotation_dataset_changelist")


def test_the_admin_changelist_links_a_rating_dataset_to_its_dashboard(admin_client, db):
    dataset = rating_dataset()
    html = admin_client.get(reverse("admin:annotation_dataset_changelist")).content.decode()
    assert reverse("dashboard-dataset", args=[dataset.name]) in html
    assert reverse("admin:annotation_dataset_build", args=[dataset.pk]) not in html


def test_imported_scores_of_0_are_refused_for_a_rating_dataset(db, write_file):
    dataset = rating_dataset()
    candidate = dataset.questions.get().candidates.first()
    path = write_file(
        "s.csv", f"question_id,candidate_id,annotator,score\n{candidate.question_id},{candidate.pk},r1,0\n"
    )
    with pytest.raises(ImportFileError, match="outside 1-5"):
        scores_import(path=path)
    assert not Score.objects.exists()


def test_the_crowd_page_shows_the_1_to_5_scale(client, db, settings):
    from crowd.providers.link import link_token
    from crowd.services.batches import crowd_batch_create, crowd_batch_publish

    settings.WELLCHOSEN_PUBLIC_URL = "https://wellchosen.example.org"
    dataset = rating_dataset()
    batch = crowd_batch_create(dataset=dataset, provider="link", name="link", settings={"units_per_worker": 1})
    crowd_batch_publish(batch=batch)
    html = client.get(reverse("crowd-link", args=[link_token(batch=batch)]), {"worker": "P1"}, follow=True)
    html = html.content.decode()
    assert "Rate each response" in html and "Ungrammatical" not in html
    assert set(re.findall(r'type="radio" name="score-[0-9a-f]+" value="(\d)"', html)) == {"1", "2", "3", "4", "5"}
    assert Assignment.objects.count() == 1
