"""Bad values posted to a unit's page (ours and the crowd's, which takes posts without a CSRF
token): each is a 400 naming the field, nothing is stored, and the unit stays leased."""

import re

import pytest
from django.urls import reverse

from annotation.models import Annotator, Assignment, AssignmentStatus, DatasetMembership, Score
from annotation.services.assignment import annotation_open
from annotation.services.submission import MAX_DURATION_MS, Answer, unit_submit
from core.errors import UserError
from crowd.providers.link import link_token
from crowd.services.batches import crowd_batch_create, crowd_batch_publish
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory, UserFactory

# What the probe sent, and values around the limits of our own range.
BAD_DURATIONS = ["-1", "9223372036854775808", "99999999999999999999", str(MAX_DURATION_MS + 1), "abc", "1e3"]


@pytest.fixture
def dataset(db, settings):
    settings.WELLCHOSEN_PUBLIC_URL = "https://wellchosen.example.org"
    dataset = DatasetFactory(name="inputs", adaptive_stopping=False, attention_check_rate=0)
    for i in range(2):
        CandidateFactory(question=QuestionFactory(dataset=dataset), text=f"The train leaves at {i}.")
    annotation_open(dataset=dataset)
    return dataset


@pytest.fixture
def annotator_client(client, dataset):
    user = UserFactory(username="ann")
    annotator = Annotator.objects.create(user=user, provider="internal", external_id="ann")
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    client.force_login(user)
    return client


@pytest.fixture
def crowd_unit(client, dataset):
    """A link worker's unit page: (the URL its form posts to, the response keys)."""
    batch = crowd_batch_create(dataset=dataset, provider="link", name="link", settings={"units_per_worker": 2})
    crowd_batch_publish(batch=batch)
    html = client.get(reverse("crowd-link", args=[link_token(batch=batch)]), {"worker": "P1"}, follow=True)
    html = html.content.decode()
    return re.search(r'id="unit-form" action="([^"]+)"', html).group(1), keys(html)


def keys(html: str) -> list[str]:
    return re.findall(r'name="score-([0-9a-f]+)" value="0"', html)


def annotator_unit(client) -> tuple[str, list[str]]:
    html = client.get(reverse("annotate-next")).content.decode()
    return re.search(r'action="([^"]+)"[^>]*id="unit-form"', html).group(1), keys(html)


def assert_refused(response, *words: str) -> None:
    text = response.content.decode()
    assert response.status_code == 400
    assert 'id="form-error"' in text or 'class="error"' in text
    for word in words:
        assert word in text
    assert not Score.objects.exists()
    assert Assignment.objects.get().status == AssignmentStatus.LEASED


@pytest.mark.parametrize("duration", BAD_DURATIONS)
def test_a_bad_duration_on_the_annotator_page_is_a_400(annotator_client, duration):
    url, ks = annotator_unit(annotator_client)
    response = annotator_client.post(url, {f"score-{k}": "1" for k in ks} | {"duration_ms": duration})
    assert_refused(response, "duration_ms")


@pytest.mark.parametrize("duration", BAD_DURATIONS)
def test_a_bad_duration_on_the_crowd_page_is_a_400(client, crowd_unit, duration):
    url, ks = crowd_unit
    response = client.post(url, {f"score-{k}": "1" for k in ks} | {"duration_ms": duration})
    assert_refused(response, "duration_ms")


def test_the_longest_duration_is_stored(annotator_client):
    url, ks = annotator_unit(annotator_client)
    annotator_client.post(url, {f"score-{k}": "1" for k in ks} | {"duration_ms": str(MAX_DURATION_MS)})
    assert Assignment.objects.get().duration_ms == MAX_DURATION_MS


def test_a_score_that_is_not_a_number_is_named_in_the_error(annotator_client):
    url, ks = annotator_unit(annotator_client)
    response = annotator_client.post(url, {f"score-{k}": "abc" for k in ks})
    assert_refused(response, "score", "whole number")


@pytest.mark.parametrize("value", ["6", "-1", "99999999999999999999", "9" * 5000])
def test_a_score_outside_the_scale_is_a_400(annotator_client, value):
    url, ks = annotator_unit(annotator_client)
    response = annotator_client.post(url, {f"score-{k}": value for k in ks})
    assert_refused(response, "score")


def test_a_score_outside_the_scale_is_a_400_on_the_crowd_page(client, crowd_unit):
    url, ks = crowd_unit
    assert_refused(client.post(url, {f"score-{k}": "99999999999999999999" for k in ks}), "score")


def test_an_over_long_label_is_refused_without_echoing_it(annotator_client):
    url, ks = annotator_unit(annotator_client)
    label = "x" * 20000
    response = annotator_client.post(url, {f"score-{k}": "1" for k in ks} | {f"labels-{ks[0]}": label})
    assert_refused(response, "reason")
    assert label not in response.content.decode()


def test_an_unknown_label_is_a_400(annotator_client):
    url, ks = annotator_unit(annotator_client)
    response = annotator_client.post(url, {f"score-{k}": "1" for k in ks} | {f"labels-{ks[0]}": "made up"})
    assert_refused(response, "unknown label")


def test_missing_scores_are_a_400(annotator_client):
    url, ks = annotator_unit(annotator_client)
    assert_refused(annotator_client.post(url, {"duration_ms": "100"}), "no score yet")


@pytest.mark.parametrize("duration", [-1, MAX_DURATION_MS + 1, 2**63])
def test_the_service_refuses_a_duration_outside_its_range(annotator_client, duration):
    # the crowd's services and any later caller get the same rule as the pages
    _, ks = annotator_unit(annotator_client)
    assignment = Assignment.objects.get()
    with pytest.raises(UserError, match="duration_ms"):
        unit_submit(
            assignment_id=assignment.pk,
            annotator=assignment.annotator,
            answers={k: Answer(1) for k in ks},
            duration_ms=duration,
        )
    assert not Score.objects.exists()
