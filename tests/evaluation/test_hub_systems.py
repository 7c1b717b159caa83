"""Systems named by their Hugging Face id: registered at a commit, evaluated at that commit
(huggingface_hub against the hub double of tests/hub_double.py)."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.models import Evaluation, EvaluationStatus, System
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services.systems import system_register


@pytest.fixture(autouse=True)
def fresh_scorers():
    """A scorer is cached per process by system id: ids restart with every test database."""
    scorer_cache_clear()
    yield
    scorer_cache_clear()


def register(name: str, checkpoint: str, *options: str) -> System:
    call_command("register_system", name, "--kind", "causal", "--checkpoint", checkpoint, *options)
    return System.objects.get(name=name)


def evaluate(system: System) -> Evaluation:
    call_command("evaluate", "--testset", "r1", "--system", system.name, "--device", "cpu")
    return Evaluation.objects.get(system=system)


def test_a_system_registered_by_hub_id_records_its_commit_and_is_evaluated(hub, testset, tiny_gpt2_dir, capsys):
    sha = hub.publish("tiny/gpt2", tiny_gpt2_dir)
    system = register("hubbed", "tiny/gpt2")
    assert (system.checkpoint, system.checkpoint_revision, system.revision) == ("tiny/gpt2", sha, f"tiny/gpt2@{sha}")
    evaluation = evaluate(system)
    assert evaluation.status == EvaluationStatus.SUCCEEDED and evaluation.summary["questions"] == 4
    assert evaluation.system_revision == f"tiny/gpt2@{sha}"  # the exact weights it scored


def test_the_evaluation_loads_the_registered_commit_after_the_branch_moved_on(hub, testset, tiny_gpt2_dir, capsys):
    # given a system registered at the head of main, which then moved to a commit whose weights are no weights
    sha = hub.publish("tiny/gpt2", tiny_gpt2_dir)
    system = register("hubbed", "tiny/gpt2@main")
    hub.publish("tiny/gpt2", tiny_gpt2_dir, extra={"model.safetensors": b"not safetensors"})
    # when it is evaluated, then the registered commit is scored
    evaluation = evaluate(system)
    assert evaluation.status == EvaluationStatus.SUCCEEDED and evaluation.system_revision == f"tiny/gpt2@{sha}"


def test_offline_a_cached_model_registers_at_the_same_commit_and_is_evaluated(
    hub, hub_offline, testset, tiny_gpt2_dir, capsys
):
    sha = hub.publish("tiny/gpt2", tiny_gpt2_dir)
    register("online", "tiny/gpt2")
    hub_offline()
    hub.requests.clear()
    system = register("offline", "tiny/gpt2")
    assert system.checkpoint_revision == sha
    assert evaluate(system).status == EvaluationStatus.SUCCEEDED
    assert hub.requests == []


def test_offline_without_a_cached_copy_the_command_names_the_model_and_how_to_fetch_it(db, hub, hub_offline):
    hub_offline()
    with pytest.raises(CommandError) as error:
        register("x", "org/model@v2")
    assert str(error.value).startswith("checkpoint org/model@v2: the model is not (completely) in the Hugging Face")
    assert "HF_HUB_OFFLINE=1" in str(error.value) and "`hf download org/model --revision v2`" in str(error.value)
    assert not System.objects.exists()


@pytest.mark.parametrize(
    ("repository", "message"),
    [("tiny/pickled", "has no safetensors weights"), ("nobody/nothing", "no such Hugging Face model")],
)
def test_a_repository_with_pickled_weights_only_or_none_is_refused(db, hub, tiny_gpt2_dir, repository, message):
    hub.publish("tiny/pickled", tiny_gpt2_dir, skip=("model.safetensors",), extra={"pytorch_model.bin": b"x"})
    with pytest.raises(CommandError, match=message):
        register("x", repository)
    assert not System.objects.exists()


def test_a_tokenizer_by_hub_id_records_its_own_commit(db, hub, tiny_gpt2_dir, tiny_tokenizer_dir):
    model = hub.publish("tiny/gpt2", tiny_gpt2_dir, skip=("token",))
    tokenizer = hub.publish("tiny/tokenizer", tiny_tokenizer_dir, extra={"config.json": b"{}"})
    system = register("split", "tiny/gpt2", "--tokenizer", "tiny/tokenizer")
    assert (system.checkpoint_revision, system.tokenizer_path, system.tokenizer_revision) == (
        model,
        "tiny/tokenizer",
        tokenizer,
    )
    assert system.revision == f"tiny/gpt2@{model} (tokenizer tiny/tokenizer@{tokenizer})"


ADMIN_FORM = {
    "name": "hubbed",
    "kind": "causal",
    "dtype": "auto",
    "max_context_tokens": 512,
    "max_candidate_tokens": 128,
    "turn_separator": "\n",
}


def test_the_admin_registers_a_system_by_hub_id(admin_client, hub, tiny_gpt2_dir):
    sha = hub.publish("tiny/gpt2", tiny_gpt2_dir)
    response = admin_client.post(reverse("admin:evaluation_system_add"), {**ADMIN_FORM, "checkpoint": "tiny/gpt2"})
    assert response.status_code == 302
    system = System.objects.get()
    assert (system.checkpoint, system.checkpoint_revision) == ("tiny/gpt2", sha)
    page = admin_client.get(reverse("admin:evaluation_system_change", args=[system.pk])).content.decode()
    assert sha in page


@pytest.mark.parametrize("checkpoint", ["nobody/nothing", "tiny/gpt2@v9", "tiny/gpt2@", "/no/such/folder"])
def test_a_bad_checkpoint_on_the_admin_form_is_a_form_error(admin_client, hub, tiny_gpt2_dir, checkpoint):
    hub.publish("tiny/gpt2", tiny_gpt2_dir)
    response = admin_client.post(reverse("admin:evaluation_system_add"), {**ADMIN_FORM, "checkpoint": checkpoint})
    assert response.status_code == 200 and "errornote" in response.content.decode()
    assert not System.objects.exists()


def test_saving_a_system_in_the_admin_keeps_the_commit_of_an_unchanged_hub_id(admin_client, hub, tiny_gpt2_dir):
    # given a system registered at the head of main, which then moved on
    sha = hub.publish("tiny/gpt2", tiny_gpt2_dir)
    system = system_register(name="hubbed", kind="causal", checkpoint="tiny/gpt2")
    moved = hub.publish("tiny/gpt2", tiny_gpt2_dir, extra={"README.md": b"moved on"})
    url = reverse("admin:evaluation_system_change", args=[system.pk])
    # when its description is edited, then it keeps its commit
    form = {**ADMIN_FORM, "checkpoint": "tiny/gpt2", "description": "edited"}
    assert admin_client.post(url, form).status_code == 302
    assert System.objects.get().checkpoint_revision == sha
    # and when its checkpoint is named again, it resolves anew
    assert admin_client.post(url, {**form, "checkpoint": "tiny/gpt2@main"}).status_code == 302
    assert System.objects.get().checkpoint_revision == moved
