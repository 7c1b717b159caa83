"""Generating negatives from the admin, and seeing how each was made beside the pool."""

import pytest
from django.urls import reverse
from django.utils.html import escape

from annotation.admin.corpus import provenance_summary
from annotation.models import Candidate, CandidateSource
from core.models import Job, JobStatus
from negatives.manipulation import ManipulationSettings
from negatives.services.generation import negatives_generate
from tests.factories import DatasetFactory, QuestionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    dataset = DatasetFactory(name="dialogues")
    for text in ["Sure, I will try again after dinner.", "How much is this jacket?"]:
        QuestionFactory(dataset=dataset, ground_truth=text)
    return dataset


def form(mlm_dir, **values):
    return {
        "mlm": str(mlm_dir),
        "per_question": 2,
        "threshold": -1e9,
        "seed": 4,
        "min_words": 3,
        "max_mask_share": 1,
        "top_k": 10,
        "skip_guard": True,  # a random tiny model: below the guard's bar (test_guard.py)
        **values,
    }


def test_the_dataset_page_starts_a_job_that_adds_negatives(
    admin_client, dataset, tiny_mlm_dir, django_capture_on_commit_callbacks
):
    url = reverse("admin:annotation_dataset_negatives", args=[dataset.pk])
    assert admin_client.get(url).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, form(tiny_mlm_dir))
    job = Job.objects.get(kind="generate_negatives")
    assert response["Location"] == reverse("job-detail", args=[job.pk])
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.params["seed"] == 4 and job.params["per_question"] == 2
    assert Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE).count() == 4


def test_the_dataset_list_links_to_the_page(admin_client, dataset):
    page = admin_client.get(reverse("admin:annotation_dataset_changelist")).content.decode()
    assert reverse("admin:annotation_dataset_negatives", args=[dataset.pk]) in page


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"mlm": "/no/such/folder"}, "no local directory"),
        ({"mlm": "org/bert@"}, "names no revision after"),
        ({"max_mask_share": 0}, "Ensure this value is greater than or equal to 0.01"),
        ({"threshold": "high"}, "Enter a number"),
    ],
)
def test_a_bad_value_is_shown_on_the_form_and_starts_nothing(admin_client, dataset, tiny_mlm_dir, values, message):
    url = reverse("admin:annotation_dataset_negatives", args=[dataset.pk])
    response = admin_client.post(url, form(tiny_mlm_dir, **values))
    assert response.status_code == 200 and message in response.content.decode()
    assert not Job.objects.exists()


def test_without_a_folder_or_setting_the_form_names_the_setting(admin_client, dataset, tiny_mlm_dir, settings):
    settings.WELLCHOSEN_MLM_MODEL = ""
    url = reverse("admin:annotation_dataset_negatives", args=[dataset.pk])
    response = admin_client.post(url, form(tiny_mlm_dir, mlm=""))
    assert "WELLCHOSEN_MLM_MODEL: no model given" in response.content.decode()


def test_the_pool_shows_how_each_negative_was_made(admin_client, dataset, tiny_mlm_dir):
    negatives_generate(
        dataset_name=dataset.name, mlm_path=str(tiny_mlm_dir), settings=ManipulationSettings(threshold=-1e9, seed=2)
    )
    negative = Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE).first()
    page = admin_client.get(reverse("admin:annotation_question_change", args=[negative.question_id])).content.decode()
    edit = negative.provenance["replacements"][0]
    summary = provenance_summary(negative)
    assert "mlm-manipulation (Park et al., NAACL 2021)" in summary and "seed 2" in summary
    assert negative.provenance["model_version"] in summary
    assert f"{edit['original']!r} → {edit['replacement']!r}" in summary
    assert escape(summary) in page
    detail = admin_client.get(reverse("admin:annotation_candidate_change", args=[negative.pk])).content.decode()
    assert "replacements" in detail and negative.provenance["setup"] in detail
