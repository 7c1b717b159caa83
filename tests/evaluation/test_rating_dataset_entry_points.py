"""Opening a rating dataset from the admin (action + form) and from the command line."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Dataset, DatasetTask
from evaluation.models import Generation
from tests.factories import GeneratedResponseFactory, GenerationFactory


@pytest.fixture
def generations(db):
    alpha = GenerationFactory(system__name="alpha")
    beta = GenerationFactory(system__name="beta")
    for generation, text in ((alpha, "I am fine."), (beta, "Not bad at all.")):
        GeneratedResponseFactory(
            generation=generation, context_key="d1", context=["Hi.", "How are you?"], references=["Good."], text=text
        )
    return alpha, beta


def test_the_admin_action_leads_to_a_form_with_the_selected_generations(admin_client, generations):
    # given two generations selected in the changelist
    ids = [g.pk for g in generations]
    response = admin_client.post(
        reverse("admin:evaluation_generation_changelist"),
        {"action": "collect_ratings", "_selected_action": ids},
    )
    # then the action opens the rating form with them preselected
    assert response.status_code == 302
    form = admin_client.get(response["Location"])
    assert form.status_code == 200
    assert sorted(form.context["form"].initial["generations"]) == sorted(ids)


def test_the_admin_form_opens_a_rating_dataset_and_shows_its_dashboard(admin_client, generations):
    response = admin_client.post(
        reverse("admin:evaluation_generation_rate"),
        {
            "generations": [g.pk for g in generations],
            "name": "rate-demo",
            "annotators_per_item": 3,
            "include_reference": "on",
        },
    )
    dataset = Dataset.objects.get(name="rate-demo")
    assert response.status_code == 302 and response["Location"] == reverse("dashboard-dataset", args=["rate-demo"])
    assert dataset.task == DatasetTask.RATE and dataset.annotators_per_item == 3
    # one unit for the shared context: both responses and the reference
    assert dataset.questions.get().candidates.count() == 3


def test_the_admin_form_shows_a_refusal_and_creates_nothing(admin_client, generations):
    Dataset.objects.create(name="taken")
    response = admin_client.post(
        reverse("admin:evaluation_generation_rate"),
        {"generations": [generations[0].pk], "name": "taken", "annotators_per_item": 5},
    )
    assert response.status_code == 200 and response.context["form"].non_field_errors()
    assert not Dataset.objects.filter(task=DatasetTask.RATE).exists()


def test_the_admin_form_shows_the_services_name_rule(admin_client, generations):
    response = admin_client.post(
        reverse("admin:evaluation_generation_rate"),
        {"generations": [generations[0].pk], "name": "Rate-Demo", "annotators_per_item": 5},
    )
    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == [
        "dataset name 'Rate-Demo' must be a slug (lower-case letters, digits, '-' and '_')"
    ]
    assert not Dataset.objects.filter(task=DatasetTask.RATE).exists()


def test_the_command_opens_a_rating_dataset_of_the_named_generations(generations, capsys):
    call_command("rating_dataset", "--name", "rate-cli", *[f"--generation={g.pk}" for g in generations])
    dataset = Dataset.objects.get(name="rate-cli")
    assert dataset.task == DatasetTask.RATE and dataset.questions.count() == 1
    assert "1 units from 2 generation(s)" in capsys.readouterr().out


def test_the_command_without_generations_says_how_to_name_them(db):
    with pytest.raises(CommandError, match="--generation ID"):
        call_command("rating_dataset", "--name", "nothing")


def test_the_command_takes_every_finished_generation_of_a_dataset(generations):
    from tests.factories import DatasetFactory

    chat = DatasetFactory(name="chat")
    Generation.objects.filter(pk__in=[g.pk for g in generations]).update(dataset=chat, status="succeeded")
    call_command("rating_dataset", "--name", "rate-chat", "--dataset", "chat", "--no-reference")
    question = Dataset.objects.get(name="rate-chat").questions.get()
    assert question.candidates.count() == 2 and not question.candidates.filter(is_ground_truth=True).exists()
