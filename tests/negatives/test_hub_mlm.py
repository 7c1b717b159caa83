"""The masked LM of negatives named by its Hugging Face id (WELLCHOSEN_MLM_MODEL, --mlm, the admin
form), resolved by huggingface_hub against the hub double of tests/hub_double.py."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Candidate, CandidateSource
from core.errors import UserError
from core.models import Job, JobStatus
from negatives.manipulation import ManipulationSettings
from negatives.mlm_loading import mlm_cache_clear, mlm_load
from negatives.services.generation import negatives_generate
from tests.factories import DatasetFactory, QuestionFactory


@pytest.fixture(autouse=True)
def fresh_models():
    mlm_cache_clear()
    yield
    mlm_cache_clear()


@pytest.fixture
def dataset(db):
    dataset = DatasetFactory(name="dialogues")
    for text in ["Sure, I will try again after dinner.", "The train leaves at nine o'clock from platform two."]:
        QuestionFactory(dataset=dataset, ground_truth=text)
    return dataset


def test_the_setting_names_a_hub_model_whose_commit_the_negatives_record(hub, dataset, tiny_mlm_dir, settings):
    sha = hub.publish("tiny/bert", tiny_mlm_dir)
    settings.WELLCHOSEN_MLM_MODEL = "tiny/bert"
    report = negatives_generate(dataset_name=dataset.name, settings=ManipulationSettings(threshold=-1e9))
    negatives = Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE)
    assert report["model"] == f"tiny/bert@{sha}" and report["candidates_added"] == negatives.count() > 0
    assert {(n.provenance["model"], n.provenance["model_version"]) for n in negatives} == {
        ("tiny/bert", f"tiny/bert@{sha}")
    }


def test_the_loaded_model_comes_from_safetensors_in_the_cache(hub, tiny_mlm_dir, tmp_path):
    sha = hub.publish("tiny/bert", tiny_mlm_dir)
    mlm = mlm_load(path=f"tiny/bert@{sha}", device="cpu")
    assert (mlm.name, mlm.version) == ("tiny/bert", f"tiny/bert@{sha}")
    assert mlm.path.startswith(str(tmp_path / "hf" / "hub")) and mlm.path.endswith(sha)


def test_offline_without_a_cached_copy_the_setting_is_named(hub, hub_offline, dataset, settings):
    hub_offline()
    settings.WELLCHOSEN_MLM_MODEL = "google-bert/bert-base-uncased"
    with pytest.raises(UserError) as error:
        negatives_generate(dataset_name=dataset.name)
    message = str(error.value)
    assert message.startswith("WELLCHOSEN_MLM_MODEL google-bert/bert-base-uncased: the model is not (completely)")
    assert "HF_HUB_OFFLINE=1" in message and "`hf download google-bert/bert-base-uncased`" in message


def test_the_command_takes_a_hub_id(hub, dataset, tiny_mlm_dir, capsys):
    sha = hub.publish("tiny/bert", tiny_mlm_dir)
    call_command("generate_negatives", "--dataset", dataset.name, "--mlm", "tiny/bert@main", "--skip-guard")
    assert Job.objects.get().result["model"] == f"tiny/bert@{sha}"


def test_the_admin_form_takes_a_hub_id_and_its_job_resolves_it(
    admin_client, hub, dataset, tiny_mlm_dir, django_capture_on_commit_callbacks
):
    sha = hub.publish("tiny/bert", tiny_mlm_dir)
    url = reverse("admin:annotation_dataset_negatives", args=[dataset.pk])
    form = {"mlm": "tiny/bert", "per_question": 1, "threshold": 0.5, "seed": 0, "min_words": 3}
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {**form, "max_mask_share": 1, "top_k": 10, "skip_guard": True})
    job = Job.objects.get()
    assert response["Location"] == reverse("job-detail", args=[job.pk])
    job.refresh_from_db()
    assert (job.status, job.result["model"]) == (JobStatus.SUCCEEDED, f"tiny/bert@{sha}"), job.error
