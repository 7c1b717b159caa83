"""The pages and actions the apps add to the admin check the model permissions they need: the admin
site's own wrapper only asks for is_staff, and Django checks permissions on its standard pages only."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.test import RequestFactory
from django.urls import reverse

from annotation.services.assignment import annotation_open
from core.models import Job
from crowd.models import CrowdBatch, CrowdBonus
from crowd.services.batches import crowd_batch_create, crowd_batch_publish
from crowd.services.work import link_unit_next, link_worker_ensure
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory, UserFactory, staff_with
from testsets.services.build import testset_build


def staff_client(client, *permissions: str):
    """A client signed in as staff with exactly these permissions ("app_label.codename")."""
    client.force_login(staff_with(*permissions))
    return client


@pytest.fixture
def testset(scored_question):
    dataset = DatasetFactory(name="released")
    for _ in range(2):
        scored_question(dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1]] * 3)
    return testset_build(dataset_name=dataset.name, name="released-1", seed=0)


@pytest.fixture
def link_batch(db):
    dataset = DatasetFactory(name="crowd", annotators_per_item=3, adaptive_stopping=False, attention_check_rate=0)
    question = QuestionFactory(dataset=dataset)
    CandidateFactory(question=question)
    annotation_open(dataset=dataset)
    return crowd_batch_create(dataset=dataset, provider="link", name="via-link")


def test_staff_without_permission_cannot_download_a_test_set(client, testset):
    url = reverse("admin:testsets_testset_download", args=[testset.pk, "tsv"])
    response = staff_client(client).get(url)
    assert response.status_code == 403
    assert testset.items.first().question.ground_truth not in response.content.decode()


def test_the_view_permission_is_enough_to_download_a_test_set(client, testset):
    url = reverse("admin:testsets_testset_download", args=[testset.pk, "tsv"])
    response = staff_client(client, "testsets.view_testset").get(url)
    assert response.status_code == 200


def test_the_view_permission_shows_a_crowd_batchs_plan_but_does_not_publish_it(client, link_batch):
    viewer = staff_client(client, "crowd.view_crowdbatch")
    url = reverse("admin:crowd_crowdbatch_plan", args=[link_batch.pk])
    assert viewer.get(url).status_code == 200
    assert viewer.post(url, {}).status_code == 403
    assert not Job.objects.exists()


def test_publishing_a_crowd_batch_needs_the_change_permission(client, link_batch):
    url = reverse("admin:crowd_crowdbatch_plan", args=[link_batch.pk])
    response = staff_client(client, "crowd.view_crowdbatch", "crowd.change_crowdbatch").post(url, {})
    assert response.status_code == 302 and Job.objects.filter(kind="crowd_publish").exists()


def test_a_bonus_needs_the_permission_to_add_bonuses(client, link_batch):
    crowd_batch_publish(batch=link_batch)
    link_batch.refresh_from_db()
    crowd_assignment = link_unit_next(batch=link_batch, worker=link_worker_ensure(batch=link_batch, worker_id="W1"))
    url = reverse("admin:crowd_crowdassignment_bonus", args=[crowd_assignment.pk])
    response = staff_client(client, "crowd.view_crowdassignment").post(
        url, {"amount": "5.00", "reason": "thanks", "purpose": "bonus"}
    )
    assert response.status_code == 403 and not CrowdBonus.objects.exists()


@pytest.mark.parametrize(
    "name",
    [
        "admin:annotation_dataset_import_dialogues",
        "admin:annotation_dataset_import_testset",
        "admin:annotation_score_import",
        "admin:retrieval_repository_import",
        "admin:evaluation_generation_rate",
        "admin:evaluation_generation_add",
        "admin:evaluation_evaluation_add",
    ],
)
def test_import_and_start_pages_refuse_staff_that_may_only_view(client, db, name):
    viewer = staff_client(client, "annotation.view_dataset", "evaluation.view_generation", "evaluation.view_evaluation")
    assert viewer.get(reverse(name)).status_code == 403


@pytest.mark.parametrize("tool", ["preview", "build", "pools"])
def test_staff_without_permission_cannot_open_a_datasets_tools(client, db, tool):
    dataset = DatasetFactory(name="tools")
    assert staff_client(client).get(reverse(f"admin:annotation_dataset_{tool}", args=[dataset.pk])).status_code == 403


# Admin actions that change nothing (they may be offered to staff that may only view).
READ_ONLY_ACTIONS = {"balance_action"}  # asks the platform for the requester account's balance


def offered_actions(user) -> dict[str, set[str]]:
    """The actions each model's changelist offers (and runs) for this user."""
    request = RequestFactory().get("/admin/")
    request.user = user
    return {
        model._meta.label: set(model_admin.get_actions(request)) for model, model_admin in admin.site._registry.items()
    }


def test_staff_that_may_only_view_are_offered_no_action_that_changes_something(db):
    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
    changing = {label: actions - READ_ONLY_ACTIONS for label, actions in offered_actions(viewer).items()}
    assert {label: actions for label, actions in changing.items() if actions} == {}, (
        "give these actions the permission they need (@admin.action(permissions=[...])) "
        "or, if they change nothing, list them in READ_ONLY_ACTIONS"
    )


def test_a_superuser_is_offered_every_action(db):
    offered = offered_actions(UserFactory(username="root", is_staff=True, is_superuser=True))
    for model, model_admin in admin.site._registry.items():
        assert set(model_admin.actions or []) <= offered[model._meta.label], model._meta.label


def test_an_action_posted_without_its_permission_does_nothing(client, link_batch):
    crowd_batch_publish(batch=link_batch)
    viewer = staff_client(client, "crowd.view_crowdbatch")
    viewer.post(
        reverse("admin:crowd_crowdbatch_changelist"), {"action": "expire_action", "_selected_action": [link_batch.pk]}
    )
    assert CrowdBatch.objects.get(pk=link_batch.pk).status == "published"


def test_cancelling_jobs_from_the_admin_needs_the_change_permission(client, db):
    job = Job.objects.create(kind="build_testset")
    viewer = staff_client(client, "core.view_job")
    viewer.post(reverse("admin:core_job_changelist"), {"action": "cancel_jobs", "_selected_action": [job.pk]})
    job.refresh_from_db()
    assert job.status == "pending"
