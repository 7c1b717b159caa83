"""The demo's toy masked LM: trained by load_demo, the default while WELLCHOSEN_MLM_MODEL is unset,
and labelled as a toy model in what it generates."""

import pytest
from django.urls import reverse
from django.utils.html import escape

from annotation.models import Candidate, CandidateSource, Dataset
from annotation.services.demo import DEMO_DATASET, demo_load
from core.models import Job, JobStatus
from core.selectors import job_outcome
from core.toy_models import toy_marker
from negatives.demo_mlm import DEMO_MLM, SETTING, TOY_DEFAULT_NOTE, demo_mlm_folder, mlm_default
from negatives.manipulation import ManipulationSettings
from negatives.mlm_loading import mlm_cache_clear
from negatives.services.demo import demo_masked_lm
from negatives.services.generation import TOY_MODEL_NOTE, negatives_generate

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_mlm(small_demo_recipes, settings):
    """The demo data and its masked LM, with no WELLCHOSEN_MLM_MODEL."""
    settings.WELLCHOSEN_MLM_MODEL = ""
    demo_load(with_pools=False, with_models=False)
    lines = demo_masked_lm()
    yield lines
    mlm_cache_clear()


def test_without_setting_or_demo_model_the_default_is_the_empty_setting(settings):
    settings.WELLCHOSEN_MLM_MODEL = ""
    assert mlm_default() == ("", SETTING)


@pytest.mark.slow
def test_the_demo_trains_a_toy_masked_lm_once_and_makes_it_the_default(demo_mlm):
    assert demo_mlm[0].startswith(f"masked LM {DEMO_MLM}: a toy model for trying the workflow")
    folder = demo_mlm_folder()
    assert mlm_default() == (str(folder), f"the demo masked LM ({SETTING} unset)")
    assert toy_marker(folder)["trained_on"]["demo dialogues"] == 40
    weights = (folder / "model.safetensors").stat().st_mtime_ns
    assert demo_masked_lm() == []
    assert (folder / "model.safetensors").stat().st_mtime_ns == weights


@pytest.mark.slow
def test_the_setting_wins_over_the_demo_model(demo_mlm, settings, tiny_mlm_dir):
    settings.WELLCHOSEN_MLM_MODEL = str(tiny_mlm_dir)
    assert mlm_default() == (str(tiny_mlm_dir), SETTING)


@pytest.mark.slow
def test_generating_without_the_setting_uses_the_demo_model_and_says_it_is_a_toy(demo_mlm):
    report = negatives_generate(dataset_name=DEMO_DATASET, settings=ManipulationSettings(threshold=-1e9))
    assert report["model"].startswith(f"{DEMO_MLM}@") and report["toy_model"] == TOY_MODEL_NOTE
    assert report["failed"] == 0 and report["candidates_added"] > 0
    generated = Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE)
    assert generated.count() == report["candidates_added"]
    assert all(c.provenance["toy_model"] for c in generated)


@pytest.mark.slow
def test_the_negatives_page_works_without_settings_and_its_report_says_toy_model(
    admin_client, demo_mlm, django_capture_on_commit_callbacks
):
    url = reverse("admin:annotation_dataset_negatives", args=[Dataset.objects.get(name=DEMO_DATASET).pk])
    assert escape(TOY_DEFAULT_NOTE) in admin_client.get(url).content.decode()
    values = {"mlm": "", "per_question": 1, "threshold": -1e9, "seed": 0, "min_words": 3, "max_mask_share": 1}
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url, {**values, "top_k": 10})
    job = Job.objects.get(kind="generate_negatives")
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert f"Toy model: the negatives were {TOY_MODEL_NOTE}." in job_outcome(job=job)["summary"]
    workspace = admin_client.get(reverse("dashboard-dataset", args=[DEMO_DATASET])).content.decode()
    toy = Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE).count()
    assert escape(f"{toy:,} of these negatives were {TOY_MODEL_NOTE}.") in workspace


@pytest.mark.slow
def test_before_generating_the_workspace_says_the_default_masked_lm_is_a_toy(admin_client, demo_mlm, settings):
    page = admin_client.get(reverse("dashboard-dataset", args=[DEMO_DATASET])).content.decode()
    assert escape(TOY_DEFAULT_NOTE) in page
    settings.WELLCHOSEN_MLM_MODEL = "/a/real/model"
    page = admin_client.get(reverse("dashboard-dataset", args=[DEMO_DATASET])).content.decode()
    assert escape(TOY_DEFAULT_NOTE) not in page
