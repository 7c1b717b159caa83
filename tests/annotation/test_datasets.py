"""The dataset services: the rules every dataset keeps, whoever creates or changes it."""

import pytest
from django.urls import reverse

from annotation.models import Dataset, DatasetTask
from annotation.services.datasets import dataset_get_or_create, dataset_save
from core.errors import UserError


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
    }
    return {**form, **changes}


def test_the_admin_adds_a_rating_dataset_with_adaptive_stopping_off(admin_client, db):
    form = admin_form(Dataset(name="rated-here"), task=DatasetTask.RATE)
    response = admin_client.post(reverse("admin:annotation_dataset_add"), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    dataset = Dataset.objects.get(name="rated-here")
    assert dataset.task == DatasetTask.RATE and dataset.adaptive_stopping is False
