"""Registering systems, and the admin pages of systems and evaluations."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils.module_loading import import_string

from core.errors import UserError
from core.models import Job
from evaluation.models import Evaluation, System
from evaluation.models.system import TFIDF_BASELINE
from evaluation.services.systems import system_register
from tests.factories import DatasetFactory
from testsets.services.build import testset_build


def test_register_system_stores_the_template_and_resolved_paths(db, tiny_gpt2_dir, capsys):
    # when a causal checkpoint is registered with a DialoGPT-like template
    call_command(
        "register_system",
        "dialo",
        "--kind",
        "causal",
        "--checkpoint",
        str(tiny_gpt2_dir),
        "--separator",
        "{eos}",
        "--speaker-tags",
        "--eos-after-candidate",
        "--dtype",
        "bfloat16",
    )
    # then the system keeps it
    system = System.objects.get(name="dialo")
    assert (system.turn_separator, system.speaker_tags, system.eos_after_candidate) == ("{eos}", True, True)
    assert system.dtype == "bfloat16" and system.tokenizer_dir == str(tiny_gpt2_dir.resolve())


def test_register_system_refuses_a_path_that_is_not_a_local_model(db, tmp_path):
    with pytest.raises(CommandError, match="is no local directory and no Hugging Face model id"):
        call_command("register_system", "x", "--kind", "causal", "--checkpoint", str(tmp_path / "nowhere"))
    with pytest.raises(CommandError, match="has no config.json"):
        call_command("register_system", "x", "--kind", "seq2seq", "--checkpoint", str(tmp_path))
    assert not System.objects.exists()


def test_register_system_refuses_a_plugin_without_losses(db):
    with pytest.raises(UserError, match="no losses"):
        system_register(name="bad", kind="plugin", plugin="tests.evaluation.plugins.NoLossesPlugin")
    with pytest.raises(UserError, match="cannot import"):
        system_register(name="bad", kind="plugin", plugin="tests.evaluation.plugins.Missing")


def test_a_plugin_system_needs_no_checkpoint(db):
    system = system_register(name="short", kind="plugin", plugin="tests.evaluation.plugins.ShortestWinsPlugin")
    assert (system.checkpoint, system.plugin) == ("", "tests.evaluation.plugins.ShortestWinsPlugin")


def test_the_database_refuses_a_model_system_without_checkpoint(db):
    from django.db import IntegrityError

    with pytest.raises(IntegrityError):
        System.objects.create(name="empty", kind="causal", checkpoint="")


def test_the_database_refuses_a_compiled_system_that_is_not_causal(db):
    from django.db import IntegrityError

    with pytest.raises(IntegrityError):
        System.objects.create(name="bart", kind="seq2seq", checkpoint="/models/bart", compile_model=True)


def test_admin_starts_an_evaluation_job(admin_client, scored_question, django_capture_on_commit_callbacks):
    # given a test set and a plugin system
    dataset = DatasetFactory(name="adm")
    scored_question(dataset=dataset, gt=[5, 5, 5, 5, 5], false=[[1, 1, 1, 1, 1]] * 3)
    testset = testset_build(dataset_name="adm", name="adm-r1", seed=0)
    system = system_register(name="short", kind="plugin", plugin="tests.evaluation.plugins.ShortestWinsPlugin")
    # when the researcher starts an evaluation in the admin (Celery is eager in tests)
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:evaluation_evaluation_add"), {"testset": testset.pk, "system": system.pk}
        )
    # then the job page follows and the evaluation is done
    job = Job.objects.get(kind="evaluate")
    assert response.status_code == 302 and response["Location"] == reverse("job-detail", args=[job.pk])
    evaluation = Evaluation.objects.get()
    assert evaluation.summary["questions"] == 1
    # and the evaluations list shows its accuracy
    page = admin_client.get(reverse("admin:evaluation_evaluation_changelist")).content.decode()
    assert f"{evaluation.summary['accuracy']:.3f}" in page
    assert admin_client.get(reverse("admin:evaluation_system_changelist")).status_code == 200


def test_a_system_registered_with_compile_is_scored_by_a_compiled_body(db, tiny_gpt2_dir):
    from evaluation.scoring.loading import scorer_cache_clear, scorer_for

    # when a causal system is registered with --compile
    call_command("register_system", "fast", "--kind", "causal", "--checkpoint", str(tiny_gpt2_dir), "--compile")
    # then it keeps the choice, and its scorer runs the packed path through a compiled body
    system = System.objects.get(name="fast")
    assert system.compile_model is True
    scorer_cache_clear()
    assert scorer_for(system, device="cpu").body is not None
    scorer_cache_clear()


def test_compiling_is_refused_for_a_system_that_is_not_causal(db, tiny_bart_dir):
    with pytest.raises(UserError, match="compiling applies to causal systems"):
        system_register(name="bart", kind="seq2seq", checkpoint=str(tiny_bart_dir), compile_model=True)


def test_the_system_form_names_the_shipped_tfidf_baseline_and_what_its_checkpoint_field_takes(admin_client):
    # when a researcher opens the form to add a system
    page = admin_client.get(reverse("admin:evaluation_system_add")).content.decode()
    # then the plugin field names the shipped baseline, a class that exists and scores
    assert TFIDF_BASELINE in page and callable(getattr(import_string(TFIDF_BASELINE), "losses", None))
    # and the checkpoint field says the baseline reads an utterance file there
    assert "utterance file" in page
