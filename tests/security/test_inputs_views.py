"""Bad request values on the researcher's pages and the crowd's entry page: a 400 with a message
(in the admin, Django's convention: the form again with its errors), never a 500, on SQLite and
PostgreSQL alike."""

import pytest
from django.urls import reverse

from annotation.models import Dataset, DatasetMembership
from tests.factories import DatasetFactory, GenerationFactory, UserFactory

HUGE = ["9223372036854775808", "99999999999999999999"]


@pytest.fixture
def staff_client(client, db):
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    client.raise_request_exception = False  # a server error is a 500 here, as in production
    return client


@pytest.fixture
def dataset(db):
    return DatasetFactory(name="dash")


@pytest.mark.parametrize("cap", ["-3", "0", "abc", "1.5", *HUGE])
def test_a_bad_cap_on_the_invite_form_is_a_400_and_creates_nobody(staff_client, dataset, cap):
    response = staff_client.post(
        reverse("dashboard-invite", args=["dash"]), {"kind": "account", "username": "newbie", "max_units": cap}
    )
    assert response.status_code == 400 and "cap" in response.content.decode()
    assert not DatasetMembership.objects.exists()


def test_an_empty_cap_invites_without_one(staff_client, dataset):
    staff_client.post(reverse("dashboard-invite", args=["dash"]), {"kind": "account", "username": "newbie"})
    assert DatasetMembership.objects.get().max_units is None


def test_a_bad_user_name_on_the_invite_form_is_a_400(staff_client, dataset):
    response = staff_client.post(reverse("dashboard-invite", args=["dash"]), {"kind": "account", "username": "a b"})
    assert response.status_code == 400 and "Enter a valid username." in response.content.decode()


@pytest.mark.parametrize("ids", ["abc", "-1", *HUGE])
def test_bad_generation_ids_on_the_rating_form_are_a_form_error(staff_client, dataset, ids):
    generation = GenerationFactory()
    response = staff_client.post(
        reverse("admin:evaluation_generation_rate"),
        {"generations": [str(generation.pk), ids], "name": "rated", "annotators_per_item": "3"},
    )
    assert response.status_code == 200 and "errorlist" in response.content.decode()
    assert not Dataset.objects.filter(name="rated").exists()


@pytest.mark.parametrize("ids", ["abc", "²", *HUGE])
def test_bad_generation_ids_in_the_rating_forms_link_are_left_out(staff_client, ids):
    response = staff_client.get(reverse("admin:evaluation_generation_rate"), {"ids": f"1,{ids}"})
    assert response.status_code == 200


@pytest.mark.parametrize("hit", ["\x00", "3HIT\x00", "x" * 5000])
def test_a_bad_hit_id_on_the_preview_is_refused(client, db, hit):
    client.raise_request_exception = False
    response = client.get(reverse("crowd-mturk"), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": hit})
    assert response.status_code in (400, 403) and "HIT" in response.content.decode()


@pytest.mark.parametrize("value", ["\x00", "A\x00B"])
def test_a_nul_in_an_mturk_parameter_is_refused(client, db, value):
    client.raise_request_exception = False
    params = {"assignmentId": value, "hitId": value, "workerId": value, "turkSubmitTo": "https://www.mturk.com"}
    assert client.get(reverse("crowd-mturk"), params).status_code in (400, 403)
