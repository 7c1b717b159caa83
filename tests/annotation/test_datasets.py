"""The dataset services: the rules every dataset keeps, whoever creates or changes it."""

import pytest
from django.urls import reverse

from annotation.models import Dataset, DatasetTask
from annotation.services.datasets import dataset_get_or_create, dataset_save
from core.errors import UserError
from core.models import Job
from tests.admin_jobs import upload
from tests.factories import DatasetFactory
from testsets.models import TestSet
from testsets.services.build import testset_build

GOOD_GT, WRONG = [5, 5, 4, 5, 5], [1, 1, 2, 1, 1]


@pytest.mark.parametrize(("task", "kept"), [(DatasetTask.RATE, False), (DatasetTask.SELECT, True)])
def test_a_rating_dataset_is_saved_with_adaptive_stopping_off(db, task, kept):
    # given a new dataset with the flag on
    dataset = dataset_save(dataset=Dataset(name="flag", task=task, adaptive_stopping=True))
    # then a rating dataset is stored with it off, a selection dataset keeps it
    assert Dataset.objects.get(pk=dataset.pk).adaptive_stopping is kept
    # and turning it on again later is undone the same way
    dataset.adaptive_stopping = True
    dataset_save(dataset=dataset)
    assert Dataset.objects.get(pk=dataset.pk).adaptive_stopping is kept


@pytest.mark.parametrize("name", ["", "Upper", "two words", "dots.too"])
def test_a_dataset_name_must_be_a_slug(db, name):
    with pytest.raises(UserError, match="dataset name .* must be a slug"):
        dataset_save(dataset=Dataset(name=name))
    with pytest.raises(UserError, match="dataset name .* must be a slug"):
        dataset_get_or_create(name=name)
    assert not Dataset.objects.exists()


def test_get_or_create_makes_a_selection_dataset_once(db):
    created = dataset_get_or_create(name="imp", context_turns=2)
    assert (created.task, created.context_turns, created.adaptive_stopping) == (DatasetTask.SELECT, 2, True)
    again = dataset_get_or_create(name="imp", context_turns=5)
    assert again.pk == created.pk and again.context_turns == 2 and Dataset.objects.count() == 1


def admin_form(dataset: Dataset, **changes) -> dict:
    form = {
        "name": dataset.name,
        "description": "",
        "annotators_per_item": 3,
        "context_turns": 3,
        "lease_minutes": 30,
        "attention_check_rate": 0,
        "error_labels": "[]",
        "adaptive_stopping": "on",
        "stopping_tolerance": 0.02,
        "spot_check_rate": 0.05,
    }
    return {**form, **changes}


def test_the_admin_adds_a_rating_dataset_with_adaptive_stopping_off(admin_client, db):
    form = admin_form(Dataset(name="rated-here"), task=DatasetTask.RATE)
    response = admin_client.post(reverse("admin:annotation_dataset_add"), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    dataset = Dataset.objects.get(name="rated-here")
    assert dataset.task == DatasetTask.RATE and dataset.adaptive_stopping is False


def test_the_admin_refuses_a_dataset_name_the_services_refuse(admin_client, db):
    # given a selection dataset, when its name is changed to one with capitals (a valid Django slug)
    dataset = DatasetFactory(name="plain")
    response = admin_client.post(
        reverse("admin:annotation_dataset_change", args=[dataset.pk]), admin_form(dataset, name="Capital")
    )
    # then the form shows the service's rule and nothing changed
    assert response.status_code == 200
    assert "dataset name &#x27;Capital&#x27; must be a slug" in response.content.decode()
    assert Dataset.objects.get(pk=dataset.pk).name == "plain"


@pytest.mark.parametrize(
    ("url", "data"),
    [
        ("admin:annotation_dataset_import_dialogues", {"file": "d.jsonl", "format": "jsonl", "context_turns": 3}),
        ("admin:annotation_dataset_import_testset", {"tsv": "t.tsv", "context_turns": 3}),
    ],
)
def test_import_forms_refuse_a_dataset_name_before_starting_a_job(admin_client, db, url, data):
    files = {key: upload(value, "x\n") for key, value in data.items() if key in ("file", "tsv")}
    response = admin_client.post(reverse(url), {**data, **files, "dataset": "Capital"})
    assert response.status_code == 200
    assert "dataset name &#x27;Capital&#x27; must be a slug" in response.content.decode()
    assert not Job.objects.exists()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Taken", "test set name &#x27;Taken&#x27; must be a slug"),
        ("taken", "a test set named &#x27;taken&#x27; exists already; test sets are frozen"),
    ],
)
def test_the_build_form_refuses_a_test_set_name_before_starting_a_job(admin_client, scored_question, name, message):
    # given a dataset with a test set named "taken"
    dataset = DatasetFactory(name="buildable")
    for _ in range(2):
        scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 3)
    testset_build(dataset_name="buildable", name="taken")
    # when the build form is posted with a name the build would refuse
    response = admin_client.post(
        reverse("admin:annotation_dataset_build", args=[dataset.pk]),
        {"name": name, "false_per_question": 3, "seed": 0, "rules": TestSet.objects.get().rules_id},
    )
    # then the form says so and no job starts
    assert response.status_code == 400 and message in response.content.decode()
    assert not Job.objects.exists()
