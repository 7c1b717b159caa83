"""The generate command, the job's queue and the admin pages of generations and responses."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from core.models import Job
from evaluation.models import EvaluationStatus, GeneratedResponse, Generation
from evaluation.services.generations import generation_start
from evaluation.services.systems import system_register
from tests.evaluation.generation_support import (
    CONTEXTS,
    PLUGINS,
    run,
)


def test_the_command_runs_the_whole_job_on_the_cpu(gpt_system, chat_dataset, capsys):
    # when the command generates with the tiny GPT-2
    call_command("generate", "--system", "gpt", "--dataset", "chat", "--device", "cpu", "--max-new-tokens", "6")
    report = json.loads(capsys.readouterr().out)
    # then every context has a response of at most 6 tokens, and the report describes them
    responses = list(GeneratedResponse.objects.all())
    assert len(responses) == report["responses"] == len(CONTEXTS)
    assert all(0 <= r.n_tokens <= 6 for r in responses)
    assert report["mean_tokens"] == pytest.approx(sum(r.n_tokens for r in responses) / len(responses))
    assert Generation.objects.get().status == EvaluationStatus.SUCCEEDED
    # and a second call reports the finished generation without running it again
    call_command("generate", "--system", "gpt", "--dataset", "chat", "--max-new-tokens", "6")
    assert json.loads(capsys.readouterr().out) == report
    assert Job.objects.count() == 1


def test_the_command_reports_bad_input(db):
    with pytest.raises(CommandError, match="no system"):
        call_command("generate", "--system", "nobody", "--dataset", "chat")


def test_generation_jobs_go_to_the_gpu_queue(
    echo_system, chat_dataset, settings, sent_tasks, django_capture_on_commit_callbacks
):
    # given a GPU queue of its own name (sent_tasks records where each job is sent)
    settings.WELLCHOSEN_GPU_QUEUE = "gpu-big"
    # when a generation is started
    with django_capture_on_commit_callbacks(execute=True):
        _, job = generation_start(system_name="echo", dataset_name="chat")
    # then its job is sent to the GPU queue once the transaction commits
    assert sent_tasks == [("core.tasks.run_job", "gpu-big", [job.pk])] and job.kind == "generate"


# -- admin -------------------------------------------------------------------------------------


def test_admin_starts_a_generation_job(admin_client, echo_system, chat_dataset, django_capture_on_commit_callbacks):
    # when the researcher starts a generation in the admin (Celery is eager in tests)
    form = {"system": echo_system.pk, "dataset": chat_dataset.pk, "strategy": "nucleus", "top_p": 0.8}
    form |= {"temperature": 1.2, "max_new_tokens": 20, "seed": 4}
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("admin:evaluation_generation_add"), form)
    # then the job page follows and the generation is done with the chosen decoding
    job = Job.objects.get(kind="generate")
    assert response.status_code == 302 and response["Location"] == reverse("job-detail", args=[job.pk])
    generation = Generation.objects.get()
    assert (generation.strategy, generation.top_p, generation.seed) == ("nucleus", 0.8, 4)
    assert generation.status == EvaluationStatus.SUCCEEDED
    assert generation.responses.count() == len(CONTEXTS)


def test_admin_shows_why_a_generation_cannot_start(admin_client, db, chat_dataset):
    system = system_register(name="scorer", kind="plugin", plugin=f"{PLUGINS}.ScoreOnlyPlugin")
    response = admin_client.post(
        reverse("admin:evaluation_generation_add"),
        {"system": system.pk, "dataset": chat_dataset.pk, "strategy": "greedy", "top_p": 0.9}
        | {"temperature": 1.0, "max_new_tokens": 40, "seed": 0},
    )
    assert response.status_code == 200 and "no generate(contexts) method" in response.content.decode()


@pytest.mark.parametrize(
    ("decoding", "message"),
    [
        ({"top_p": 0}, "top-p must be in (0, 1], not 0.0"),
        ({"top_p": 1.5}, "top-p must be in (0, 1], not 1.5"),
        ({"temperature": 0}, "temperature must be positive, not 0.0"),
        ({"max_new_tokens": 0}, "max new tokens must be between 1 and 32767, not 0"),
        ({"max_new_tokens": 32768}, "max new tokens must be between 1 and 32767, not 32768"),
    ],
)
def test_admin_shows_the_services_decoding_rules(admin_client, echo_system, chat_dataset, decoding, message):
    form = {"system": echo_system.pk, "dataset": chat_dataset.pk, "strategy": "nucleus", "top_p": 0.9}
    form |= {"temperature": 1.0, "max_new_tokens": 40, "seed": 0} | decoding
    response = admin_client.post(reverse("admin:evaluation_generation_add"), form)
    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == [message]
    assert not Generation.objects.exists() and not Job.objects.exists()


def test_admin_lists_generations_and_responses_in_constant_queries(
    admin_client, echo_system, chat_dataset, django_assert_max_num_queries
):
    # given one finished generation
    generation, _ = run("echo")
    generation_list = reverse("admin:evaluation_generation_changelist")
    response_list = reverse("admin:evaluation_generatedresponse_changelist")
    with django_assert_max_num_queries(12):
        page = admin_client.get(generation_list).content.decode()
    assert f">{len(CONTEXTS)}</a>" in page  # its responses, linked
    with django_assert_max_num_queries(12):
        page = admin_client.get(response_list, {"generation__id__exact": generation.pk, "q": "echo"}).content.decode()
    assert page.count("echo ") >= len(CONTEXTS)
    response = GeneratedResponse.objects.first()
    detail = admin_client.get(reverse("admin:evaluation_generatedresponse_change", args=[response.pk]))
    assert detail.status_code == 200 and response.context[-1] in detail.content.decode()
    assert admin_client.get(reverse("admin:evaluation_generation_change", args=[generation.pk])).status_code == 200
