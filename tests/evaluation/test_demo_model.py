"""The demo's toy causal system: trained and registered by load_demo, evaluated like any system,
and labelled as a toy model wherever its numbers show."""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.services.demo import demo_load
from core.models import Job, JobStatus
from core.services.jobs import job_execute
from core.toy_models import TOY_PURPOSE, toy_marker
from evaluation.models import Evaluation, EvaluationStatus, System
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services import demo_model
from evaluation.services.campaign_setup import campaign_create
from evaluation.services.campaigns import campaign_start
from evaluation.services.demo import DEMO_SYSTEM
from evaluation.services.demo_model import DEMO_CAUSAL_SYSTEM, demo_causal_folder, demo_gpt_train
from evaluation.services.evaluations import evaluation_start
from evaluation.services.systems import system_register
from retrieval.services.demo import DEMO_REPOSITORY
from testsets.services.demo import DEMO_ANNOTATED, DEMO_TESTSET

pytestmark = [pytest.mark.slow, pytest.mark.django_db]  # each test trains the toy models (small recipes)


def workspace_step(client, key: str) -> str:
    """The HTML of one step of the demo test set's dataset workspace."""
    html = client.get(reverse("dashboard-dataset", args=[DEMO_ANNOTATED])).content.decode()
    return html.split(f'id="step-{key}"', 1)[1].split("</li>\n", 1)[0]


@pytest.fixture
def demo(small_demo_recipes) -> list[str]:
    yield demo_load(with_pools=False)
    scorer_cache_clear()


@pytest.fixture
def evaluated(demo) -> Evaluation:
    evaluation, job = evaluation_start(testset_name=DEMO_TESTSET, system_name=DEMO_CAUSAL_SYSTEM, enqueue=False)
    job_execute(job_id=job.pk)
    evaluation.refresh_from_db()
    return evaluation


def test_load_demo_trains_the_causal_lm_and_registers_it_as_a_toy_system(demo):
    assert any(line.startswith(f"causal LM {DEMO_CAUSAL_SYSTEM}: a toy model") for line in demo)
    system = System.objects.get(name=DEMO_CAUSAL_SYSTEM)
    folder = demo_causal_folder()
    assert system.kind == "causal" and system.checkpoint == str(folder.resolve()) and system.toy_model
    assert "toy causal LM" in system.description and "trying the workflow" in system.description
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
    assert toy_marker(folder)["trained_on"]["demo dialogues"] == 40
    assert not System.objects.get(name=DEMO_SYSTEM).toy_model


def test_loading_the_demo_again_neither_retrains_nor_registers_again(demo, small_demo_recipes):
    weights = demo_causal_folder() / "model.safetensors"
    before = (weights.stat().st_mtime_ns, System.objects.get(name=DEMO_CAUSAL_SYSTEM).updated_at)
    assert demo_load(with_pools=False) == []
    assert (weights.stat().st_mtime_ns, System.objects.get(name=DEMO_CAUSAL_SYSTEM).updated_at) == before


def test_another_recipe_retrains_and_registers_the_system_again(demo, monkeypatch):
    before = System.objects.get(name=DEMO_CAUSAL_SYSTEM).updated_at
    monkeypatch.setattr(demo_model, "DEMO_GPT_RECIPE", {**demo_model.DEMO_GPT_RECIPE, "steps": 4})
    done = demo_load(with_pools=False)
    assert [line.split(":")[0] for line in done] == [f"causal LM {DEMO_CAUSAL_SYSTEM}", f"system {DEMO_CAUSAL_SYSTEM}"]
    assert System.objects.get(name=DEMO_CAUSAL_SYSTEM).updated_at > before


@pytest.mark.heavy  # trains twice; the database plays no part
def test_the_training_is_reproducible(tmp_path, small_demo_recipes):
    recipe = demo_model.DEMO_GPT_RECIPE
    first, again = (
        demo_gpt_train(folder=tmp_path / "a", recipe=recipe),
        demo_gpt_train(folder=tmp_path / "b", recipe=recipe),
    )
    assert first["last_loss"] == again["last_loss"]
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_the_demo_system_evaluates_the_demo_test_set(demo, capsys):
    call_command("evaluate", "--testset", DEMO_TESTSET, "--system", DEMO_CAUSAL_SYSTEM, "--device", "cpu")
    evaluation = Evaluation.objects.get(system__name=DEMO_CAUSAL_SYSTEM)
    assert evaluation.status == EvaluationStatus.SUCCEEDED
    report = json.loads(capsys.readouterr().out)
    assert report["questions"] == evaluation.testset.manifest["counts"]["questions"] and 0 <= report["accuracy"] <= 1


def test_registering_the_folder_under_another_name_still_makes_a_toy_system(demo, tiny_gpt2_dir):
    assert system_register(name="my-try", kind="causal", checkpoint=str(demo_causal_folder())).toy_model
    assert not system_register(name="real", kind="causal", checkpoint=str(tiny_gpt2_dir)).toy_model


def test_the_system_pages_say_it_is_a_toy_model(admin_client, demo):
    system = System.objects.get(name=DEMO_CAUSAL_SYSTEM)
    page = admin_client.get(reverse("admin:evaluation_system_change", args=[system.pk])).content.decode()
    assert "trained in seconds for trying the workflow" in page
    listing = admin_client.get(reverse("admin:evaluation_system_changelist") + "?toy_model__exact=1").content.decode()
    assert DEMO_CAUSAL_SYSTEM in listing and DEMO_SYSTEM not in listing


def test_the_evaluation_pages_say_its_numbers_come_from_a_toy_model(admin_client, evaluated):
    assert evaluated.status == EvaluationStatus.SUCCEEDED
    note = f"{DEMO_CAUSAL_SYSTEM} is {TOY_PURPOSE}."
    page = admin_client.get(reverse("admin:evaluation_evaluation_change", args=[evaluated.pk])).content.decode()
    assert note in page
    assert note in admin_client.get(reverse("admin:evaluation_evaluation_changelist")).content.decode()
    workspace = admin_client.get(reverse("dashboard-dataset", args=[DEMO_ANNOTATED])).content.decode()
    assert (
        '<span class="badge-toy">toy model</span>' in workspace and f"{DEMO_CAUSAL_SYSTEM}: {TOY_PURPOSE}" in workspace
    )


def test_an_evaluation_of_a_real_system_carries_no_toy_label(admin_client, demo):
    evaluation, job = evaluation_start(testset_name=DEMO_TESTSET, system_name=DEMO_SYSTEM, enqueue=False)
    job_execute(job_id=job.pk)
    page = admin_client.get(reverse("admin:evaluation_evaluation_change", args=[evaluation.pk])).content.decode()
    assert TOY_PURPOSE not in page
    step = workspace_step(admin_client, "evaluations")
    assert DEMO_SYSTEM in step and "badge-toy" not in step


def test_a_campaign_with_the_demo_system_runs_and_its_report_labels_it(admin_client, demo):
    campaign = campaign_create(
        name="try",
        testset_name=DEMO_TESTSET,
        system_names=[DEMO_CAUSAL_SYSTEM, DEMO_SYSTEM],
        repository_name=DEMO_REPOSITORY,
        random_trials=2,
        bootstrap_resamples=20,
    )
    job = campaign_start(campaign=campaign, enqueue=False)
    job_execute(job_id=job.pk)
    assert Job.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED
    campaign.refresh_from_db()
    rows = {row["system"]: row for row in campaign.report["leaderboard"]}
    assert rows[DEMO_CAUSAL_SYSTEM]["toy_model"] and not rows[DEMO_SYSTEM]["toy_model"]
    assert rows[DEMO_CAUSAL_SYSTEM]["accuracy"] is not None and rows[DEMO_CAUSAL_SYSTEM]["random"]["trials"] == 2
    assert f"{DEMO_CAUSAL_SYSTEM}: {TOY_PURPOSE}" in campaign.report["notes"]
    html = admin_client.get(reverse("campaign-report", args=[campaign.name])).content.decode()
    assert html.count(">toy model</span>") == 1
