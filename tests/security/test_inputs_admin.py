"""The admin's list pages and their actions with forged values: the list again with a message,
never a 500, for every list page of our apps and of the accounts."""

import pytest
from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from core.admin.helpers import CheckedInputAdmin
from tests.factories import DatasetFactory, UserFactory

OURS = {"auth", "core", "annotation", "testsets", "crowd", "retrieval", "evaluation"}


def our_admins() -> list[tuple[type, admin.ModelAdmin]]:
    return [(model, ma) for model, ma in admin.site._registry.items() if model._meta.app_label in OURS]


def changelist(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


@pytest.fixture
def staff_client(client, db):
    DatasetFactory()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    client.raise_request_exception = False
    return client


def server_errors(responses) -> list:
    return [(where, response.status_code) for where, response in responses if response.status_code >= 500]


def test_every_admin_of_ours_checks_its_request_values():
    assert [ma for _, ma in our_admins() if not isinstance(ma, CheckedInputAdmin)] == []


@pytest.mark.parametrize("selected", [["abc"], ["9223372036854775808"], ["1", "1.5"]])
def test_an_action_on_rows_that_are_no_ids_is_refused(staff_client, selected):
    responses = []
    for model, ma in our_admins():
        for action in ["delete_selected", *(a if isinstance(a, str) else a.__name__ for a in ma.actions or [])]:
            data = {"action": action, ACTION_CHECKBOX_NAME: selected, "index": "0"}
            responses.append(((model.__name__, action), staff_client.post(changelist(model), data)))
    assert server_errors(responses) == []


def test_an_action_on_bad_ids_says_so(staff_client):
    data = {"action": "delete_selected", ACTION_CHECKBOX_NAME: ["abc"], "index": "0"}
    response = staff_client.post(reverse("admin:annotation_dataset_changelist"), data, follow=True)
    assert "are not ids" in response.content.decode()


@pytest.mark.parametrize("value", ["9223372036854775808", "-9223372036854775809", "99999999999999999999"])
def test_a_list_filter_beyond_the_databases_integers_is_refused(staff_client, value):
    responses = []
    for model, ma in our_admins():
        for name in [f for f in ma.list_filter if isinstance(f, str)]:
            for lookup in (f"{name}__exact", f"{name}__id__exact"):
                responses.append(((model.__name__, lookup), staff_client.get(changelist(model), {lookup: value})))
    assert server_errors(responses) == []


def test_an_over_long_search_is_refused_with_a_message(staff_client):
    response = staff_client.get(reverse("admin:annotation_dataset_changelist"), {"q": "x" * 60000}, follow=True)
    assert response.status_code == 200 and "search" in response.content.decode()


def test_no_list_page_fails_on_an_over_long_search(staff_client):
    responses = [
        (model.__name__, staff_client.get(changelist(model), {"q": "x" * 60000}))
        for model, ma in our_admins()
        if ma.search_fields
    ]
    assert server_errors(responses) == []
