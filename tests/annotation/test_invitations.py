"""Sign-up links make at most the accounts the researcher allows, until the day they set, and the
dataset's page lists who joined through which link."""

import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import signing
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from annotation.models import DatasetMembership, Invitation
from annotation.selectors_annotators import dataset_invitations
from annotation.services.invitations import invitation_create, invitation_revoke, invite_accept
from core.errors import UserError
from tests.factories import DatasetFactory

PASSWORD = "long-enough-pw"


@pytest.fixture
def dataset(db):
    return DatasetFactory(name="invited")


def sign_up(client, token: str, username: str):
    client.logout()
    return client.post(reverse("invite-accept", args=[token]), {"username": username, "password": PASSWORD})


def test_a_link_makes_no_more_accounts_than_its_limit(client, dataset):
    invitation, token = invitation_create(dataset=dataset, max_uses=2)
    assert sign_up(client, token, "first").status_code == 302
    assert sign_up(client, token, "second").status_code == 302
    third = sign_up(client, token, "third")
    assert third.status_code == 400 and "used as often as it may" in third.content.decode()
    assert not get_user_model().objects.filter(username="third").exists()
    invitation.refresh_from_db()
    assert invitation.uses == 2


def test_an_expired_link_makes_no_account(client, dataset):
    invitation, token = invitation_create(dataset=dataset, days=1)
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = sign_up(client, token, "late")
    assert response.status_code == 400 and "expired" in response.content.decode()
    assert client.get(reverse("invite-accept", args=[token])).status_code == 400
    assert not get_user_model().objects.filter(username="late").exists()


def test_a_withdrawn_link_makes_no_account_and_its_members_stay(client, dataset):
    invitation, token = invitation_create(dataset=dataset)
    sign_up(client, token, "early")
    invitation_revoke(invitation=invitation)
    response = sign_up(client, token, "after")
    assert response.status_code == 400 and "withdrawn" in response.content.decode()
    assert list(DatasetMembership.objects.values_list("annotator__external_id", flat=True)) == ["early"]


def test_a_link_of_the_earlier_signed_form_is_refused(client, dataset):
    old = signing.dumps({"dataset": dataset.pk}, salt="wellchosen.invite", compress=True)
    response = client.get(reverse("invite-accept", args=[old]))
    assert response.status_code == 400 and "not valid" in response.content.decode()


def test_the_token_is_not_stored(dataset):
    invitation, token = invitation_create(dataset=dataset)
    assert token not in invitation.token_sha256 and len(token) >= 40


def test_members_who_join_through_a_link_get_its_cap_and_name_it(client, dataset):
    invitation, token = invitation_create(dataset=dataset, max_units=3, label="lab list")
    sign_up(client, token, "capped")
    membership = DatasetMembership.objects.get(annotator__external_id="capped")
    assert (membership.max_units, membership.invitation) == (3, invitation)


def test_the_database_refuses_more_uses_than_the_limit(dataset):
    invitation, _ = invitation_create(dataset=dataset, max_uses=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Invitation.objects.filter(pk=invitation.pk).update(uses=2)


@pytest.mark.parametrize(
    ("max_uses", "days", "message"),
    [(0, 14, "from 1 to 10,000 accounts"), (10, 0, "1 to 90 days"), (10, 91, "1 to 90 days"), (10_001, 1, "accounts")],
)
def test_limits_out_of_bounds_are_refused(dataset, max_uses, days, message):
    with pytest.raises(UserError, match=message):
        invitation_create(dataset=dataset, max_uses=max_uses, days=days)
    assert not Invitation.objects.exists()


def test_the_researcher_sets_the_limits_on_the_dataset_page(admin_client, client, dataset):
    admin_client.post(
        reverse("dashboard-invite", args=[dataset.name]),
        {"kind": "link", "max_uses": "1", "days": "3", "label": "pilot"},
    )
    page = admin_client.get(reverse("dashboard-dataset", args=[dataset.name])).content.decode()
    url = page.split('<code id="invite-url">')[1].split("</code>")[0]
    invitation = Invitation.objects.get()
    assert (invitation.max_uses, invitation.label) == (1, "pilot")
    assert timedelta(days=2, hours=23) < invitation.expires_at - timezone.now() <= timedelta(days=3)
    # the link works once; the page then lists who joined through it
    client.post(url, {"username": "piloteer", "password": PASSWORD})
    assert sign_up(client, url.rstrip("/").rsplit("/", 1)[1], "second").status_code == 400
    page = admin_client.get(reverse("dashboard-dataset", args=[dataset.name])).content.decode()
    table = page.split('id="invitations"')[1].split("</table>")[0]
    assert "pilot" in table and "1 / 1" in table and "piloteer" in table


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("max_uses", "0", "from 1 to 10,000 accounts"), ("days", "365", "1 to 90 days"), ("days", "x", "whole number")],
)
def test_a_bad_limit_on_the_dataset_page_is_a_400(admin_client, dataset, field, value, message):
    response = admin_client.post(reverse("dashboard-invite", args=[dataset.name]), {"kind": "link", field: value})
    assert response.status_code == 400 and message in response.content.decode()
    assert not Invitation.objects.exists()


def test_the_researcher_withdraws_a_link_on_the_dataset_page(admin_client, client, dataset):
    invitation, token = invitation_create(dataset=dataset)
    admin_client.post(reverse("dashboard-invitation-revoke", args=[dataset.name, invitation.pk]))
    assert sign_up(client, token, "after").status_code == 400
    page = admin_client.get(reverse("dashboard-dataset", args=[dataset.name])).content.decode()
    assert "withdrawn" in page.split('id="invitations"')[1]


def test_a_link_of_another_dataset_is_not_withdrawn_from_this_page(admin_client, dataset):
    other = DatasetFactory(name="other")
    invitation, _ = invitation_create(dataset=other)
    response = admin_client.post(reverse("dashboard-invitation-revoke", args=[dataset.name, invitation.pk]))
    assert response.status_code == 404
    invitation.refresh_from_db()
    assert invitation.revoked_at is None


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are PostgreSQL's (SQLite locks the file)")
def test_a_sign_up_racing_another_for_the_last_place_is_refused_cleanly():
    # given another sign-up that holds the link's row and takes its last place
    invitation, token = invitation_create(dataset=DatasetFactory(name="race"), max_uses=1)
    held, release = threading.Event(), threading.Event()

    def other_sign_up():
        try:
            with transaction.atomic():
                Invitation.objects.select_for_update().get(pk=invitation.pk)
                held.set()
                release.wait(timeout=10)
                Invitation.objects.filter(pk=invitation.pk).update(uses=F("uses") + 1)
        finally:
            connection.close()

    other = threading.Thread(target=other_sign_up)
    other.start()
    assert held.wait(timeout=10)
    threading.Timer(0.5, release.set).start()
    # then this one waits for it, and is told the link is used up (no account, no database error)
    try:
        with pytest.raises(UserError, match="used as often"):
            invite_accept(token=token, username="late", password=PASSWORD)
    finally:
        release.set()
        other.join(timeout=30)
    assert not get_user_model().objects.filter(username="late").exists()


def test_the_links_and_who_joined_through_them_are_two_queries(client, dataset, django_assert_num_queries):
    for n in range(3):
        _, token = invitation_create(dataset=dataset)
        for m in range(2):
            sign_up(client, token, f"joined{n}{m}")
    with django_assert_num_queries(2):
        names = [[str(m.annotator) for m in i.joined] for i in dataset_invitations(dataset=dataset)]
    assert sorted(sum(names, [])) == [f"joined{n}{m}" for n in range(3) for m in range(2)]
