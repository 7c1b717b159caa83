"""Crowd pages with forged or stale capabilities: a broken signature, a token made for another page
or another batch, an expired one, a HIT that is not ours. Each is a 403 with a message, never a
500 and never a unit."""

import time

import pytest
from django.core import signing
from django.urls import reverse

from annotation.models import Score
from crowd.models import CrowdAssignment
from crowd.providers.link import link_token
from crowd.selectors import unit_token
from crowd.services.batches import crowd_batch_create, crowd_batch_publish
from tests.security.authz_world import GT_CROWD, HIT_ID, world_kept


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    with world_kept(django_db_blocker) as built:
        yield built


@pytest.fixture
def crowd_client(client):
    """Crowd workers have no account (and no 500 may turn into a traceback page)."""
    client.raise_request_exception = False
    return client


def broken(token: str) -> str:
    """The token with one character of its signature changed."""
    return token[:-1] + ("A" if token[-1] != "A" else "B")


def signed_days_ago(monkeypatch, days: int, make):
    """A token made ``days`` ago (signing reads the time from time.time())."""
    then = time.time() - days * 86400
    with monkeypatch.context() as patch:
        patch.setattr(signing.time, "time", lambda: then)
        return make()


def refused(response) -> bool:
    body = response.content.decode()
    return response.status_code == 403 and GT_CROWD not in body and 'name="score-' not in body


def unit_tokens(world, monkeypatch) -> dict[str, str]:
    token = world.values["unit_token"]
    ca = world.objects["crowd.crowdassignment"]
    return {
        "broken signature": broken(token),
        "truncated": token[: len(token) // 2],
        "a batch's link token": world.values["link_token"],
        "an invitation token": world.values["invite_token"],
        "expired (8 days)": signed_days_ago(monkeypatch, 8, lambda: unit_token(crowd_assignment=ca)),
        "garbage": "x" * 4000,
        "non-ascii": "ünïcødé:ß:☃",
    }


def test_the_genuine_unit_token_shows_the_unit(db, world, crowd_client):
    assert not refused(crowd_client.get(reverse("crowd-unit", args=[world.values["unit_token"]])))


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_forged_unit_token_is_refused(db, world, crowd_client, monkeypatch, method):
    for what, token in unit_tokens(world, monkeypatch).items():
        response = getattr(crowd_client, method)(reverse("crowd-unit", args=[token]), {"score-x": "5"})
        assert refused(response), f"{what}: {response.status_code}"
    assert not Score.objects.filter(annotator=world.values["link_worker"]).exists()


def test_a_unit_token_of_a_worker_for_another_assignment_is_refused(db, world, crowd_client):
    """Tokens are signed for (assignment, worker): one that names another worker's assignment finds nothing."""
    ca = world.objects["crowd.crowdassignment"]
    forged = signing.dumps({"ca": ca.pk, "w": ca.worker_id + 1000}, salt="wellchosen.crowd.unit")
    assert refused(crowd_client.get(reverse("crowd-unit", args=[forged])))


def test_a_unit_token_whose_unit_is_gone_is_refused(db, world, crowd_client):
    ca = world.objects["crowd.crowdassignment"]
    CrowdAssignment.objects.filter(pk=ca.pk).update(assignment=None)
    assert refused(crowd_client.get(reverse("crowd-unit", args=[world.values["unit_token"]])))


def link_tokens(world, monkeypatch) -> dict[str, str]:
    token = world.values["link_token"]
    batch = world.objects["crowd.crowdbatch"]
    mturk = crowd_batch_create(dataset=batch.dataset, provider="mturk", name="authz-mturk-link")
    return {
        "broken signature": broken(token),
        "a unit token": world.values["unit_token"],
        "expired (400 days)": signed_days_ago(monkeypatch, 400, lambda: link_token(batch=batch)),
        "an MTurk batch's token (no links)": link_token(batch=mturk),
        "garbage": "%2e%2e%2f" * 50,
    }


@pytest.mark.parametrize("page", ["crowd-link", "crowd-link-next"])
def test_a_forged_link_token_is_refused(db, world, crowd_client, monkeypatch, page):
    for what, token in link_tokens(world, monkeypatch).items():
        response = crowd_client.get(reverse(page, args=[token]), {"worker": "AUTHZWORKER9"})
        assert refused(response), f"{what}: {response.status_code}"


def test_another_batchs_link_does_not_continue_this_batchs_session(db, world, crowd_client):
    crowd_client.get(reverse("crowd-link", args=[world.values["link_token"]]), {"worker": "AUTHZWORKER9"})
    assert crowd_client.get(reverse("crowd-link-next", args=[world.values["link_token"]])).status_code == 302
    other = crowd_client.get(reverse("crowd-link-next", args=[world.values["other_link_token"]]))
    assert refused(other)


def test_a_closed_batchs_link_is_refused(db, world, crowd_client):
    batch = crowd_batch_create(dataset=world.objects["crowd.crowdbatch"].dataset, provider="link", name="closed")
    crowd_batch_publish(batch=batch)
    batch.refresh_from_db()
    batch.status = "closed"
    batch.save(update_fields=["status"])
    response = crowd_client.get(reverse("crowd-link", args=[link_token(batch=batch)]), {"worker": "W9"}, follow=True)
    assert refused(response)


@pytest.mark.parametrize(
    "params",
    [
        {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "3NOTOURHIT000000000000000000"},
        {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"},
        {"assignmentId": "3ASG1", "hitId": HIT_ID, "workerId": "W1", "turkSubmitTo": "https://evil.example"},
        {"assignmentId": "not an id!", "hitId": HIT_ID, "workerId": "W1", "turkSubmitTo": "https://www.mturk.com"},
        {"assignmentId": "3ASG1", "hitId": HIT_ID, "workerId": "", "turkSubmitTo": "https://www.mturk.com"},
        {"assignmentId": "3ASG1", "hitId": "3NOTOURHIT0000", "workerId": "W1", "turkSubmitTo": "https://www.mturk.com"},
        {"assignmentId": "x" * 5000, "hitId": HIT_ID, "workerId": "W1", "turkSubmitTo": "https://www.mturk.com"},
    ],
    ids=["unknown HIT", "no HIT", "foreign turkSubmitTo", "malformed assignment", "no worker", "unknown HIT", "long"],
)
def test_the_mturk_page_refuses_what_mturk_cannot_have_sent(db, world, crowd_client, params):
    assert refused(crowd_client.get(reverse("crowd-mturk"), params))


@pytest.mark.parametrize("token", ["broken", "x" * 3000, "ünïcødé"])
def test_a_forged_invitation_is_refused_with_a_message(db, world, crowd_client, token):
    token = broken(world.values["invite_token"]) if token == "broken" else token
    for method in ("get", "post"):
        response = getattr(crowd_client, method)(reverse("invite-accept", args=[token]), {"username": "mallory"})
        assert response.status_code == 400 and "authz-a" not in response.content.decode()


def test_invented_worker_ids_past_an_addresss_hourly_limit_are_refused_and_stored_nowhere(db, world):
    """A genuine link, made-up ids from one address: the fourth new id in an hour is a 429 with a
    message and no annotator row, whatever X-Forwarded-For it sends (no proxy is trusted)."""
    from django.test import Client

    from annotation.models import Annotator

    token = world.values["link_token"]
    statuses = []
    for n in range(5):
        client = Client(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
        statuses.append(client.get(reverse("crowd-link", args=[token]), {"worker": f"SYBIL{n}"}).status_code)
    assert statuses == [302, 302, 302, 429, 429]
    assert not Annotator.objects.filter(external_id__in=["SYBIL3", "SYBIL4"]).exists()
