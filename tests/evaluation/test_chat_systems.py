"""Systems that read their contexts through the tokenizer's chat template: registration, loading,
evaluation and generation."""

import pytest
import torch
from django.core.management import CommandError, call_command
from django.db import IntegrityError
from django.urls import reverse

from core.errors import UserError
from core.models import JobStatus
from core.services.jobs import job_execute
from evaluation.models import ContextForm, EvaluationStatus, GeneratedResponse, System
from evaluation.scoring.chat import ChatTemplate
from evaluation.scoring.decoding import Decoding
from evaluation.scoring.generate import generator_for
from evaluation.scoring.lm_generate import LMGenerator
from evaluation.scoring.loading import scorer_cache_clear, scorer_for
from evaluation.services.evaluations import evaluation_start
from evaluation.services.systems import system_register
from tests.evaluation.generation_support import CONTEXTS, run
from tests.factories import DatasetFactory
from testsets.services.build import testset_build


@pytest.fixture(autouse=True)
def no_loaded_systems():
    yield
    scorer_cache_clear()


@pytest.fixture
def chat_system(db, tiny_chat_gpt2_dir):
    # (the tiny model has 96 positions: 32 for a candidate leave 64 for the context)
    return system_register(
        name="chatty", kind="causal", checkpoint=str(tiny_chat_gpt2_dir), chat_template=True, max_candidate_tokens=32
    )


# -- registration ----------------------------------------------------------------------------


def test_register_system_keeps_the_chat_template_choice(db, tiny_chat_gpt2_dir, tiny_gpt2_dir):
    call_command(
        "register_system", "chatty", "--kind", "causal", "--checkpoint", str(tiny_chat_gpt2_dir), "--chat-template"
    )
    call_command("register_system", "plain", "--kind", "causal", "--checkpoint", str(tiny_gpt2_dir))
    chat, plain = System.objects.get(name="chatty"), System.objects.get(name="plain")
    assert (chat.chat_template, plain.chat_template) == (True, False)
    # and other code can say which form each system's context takes
    assert (
        (chat.context_form, plain.context_form)
        == (ContextForm.CHAT, ContextForm.PLAIN)
        == (
            "chat template",
            "plain template",
        )
    )


def test_register_system_refuses_a_chat_template_the_tokenizer_does_not_have(db, tiny_gpt2_dir):
    with pytest.raises(CommandError, match="has no chat template"):
        call_command("register_system", "x", "--kind", "causal", "--checkpoint", str(tiny_gpt2_dir), "--chat-template")
    assert not System.objects.exists()


def test_a_chat_template_is_refused_for_a_system_that_is_not_causal(db, tiny_bart_dir):
    with pytest.raises(UserError, match="chat template applies to causal systems"):
        system_register(name="bart", kind="seq2seq", checkpoint=str(tiny_bart_dir), chat_template=True)
    with pytest.raises(IntegrityError):
        System.objects.create(name="bart", kind="seq2seq", checkpoint="/models/bart", chat_template=True)


def test_the_admin_form_offers_the_chat_template(admin_client):
    page = admin_client.get(reverse("admin:evaluation_system_add")).content.decode()
    assert 'name="chat_template"' in page and "Render the context with the tokenizer" in page


def test_the_admin_refuses_a_chat_template_for_an_encoder_decoder(admin_client, tiny_bart_dir):
    form = {
        "name": "bart",
        "kind": "seq2seq",
        "checkpoint": str(tiny_bart_dir),
        "dtype": "auto",
        "max_context_tokens": 512,
        "max_candidate_tokens": 128,
        "turn_separator": "\n",
        "chat_template": "on",
    }
    response = admin_client.post(reverse("admin:evaluation_system_add"), form)
    assert response.status_code == 200 and "chat template applies to causal systems" in response.content.decode()
    assert not System.objects.exists()
    # the same system without it is saved
    del form["chat_template"]
    assert admin_client.post(reverse("admin:evaluation_system_add"), form).status_code == 302
    assert System.objects.get().chat_template is False


# -- loading ---------------------------------------------------------------------------------


def test_a_chat_system_is_scored_through_its_template(chat_system):
    scorer = scorer_for(chat_system, device="cpu")
    assert isinstance(scorer.template, ChatTemplate)
    assert scorer.render(["Hi.", "How are you?"]) == "<|assistant|>Hi.<|end|><|user|>How are you?<|end|><|assistant|>"


def test_loading_a_chat_system_whose_tokenizer_has_no_template_fails_clearly(db, tiny_gpt2_dir):
    # given a system saved without the registration's check (an edited tokenizer, the admin)
    system = System.objects.create(name="lost", kind="causal", checkpoint=str(tiny_gpt2_dir), chat_template=True)
    with pytest.raises(UserError, match="has no chat template"):
        scorer_for(system, device="cpu")


def test_an_evaluation_through_the_chat_template_selects_the_lowest_loss(chat_system, scored_question):
    # given a test set of two questions
    dataset = DatasetFactory(name="eval")
    for _ in range(2):
        scored_question(dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1]] * 3)
    testset_build(dataset_name="eval", name="r1", seed=0)
    # when the chat system is evaluated on it
    evaluation, job = evaluation_start(testset_name="r1", system_name="chatty", enqueue=False, device="cpu")
    job_execute(job_id=job.pk)
    evaluation.refresh_from_db()
    # then every question has the selection of the chat scorer's lowest loss
    assert evaluation.status == EvaluationStatus.SUCCEEDED, evaluation.error
    for result in evaluation.questions.prefetch_related("candidates__candidate"):
        best = min(result.candidates.all(), key=lambda c: c.loss)
        assert result.selected_position == best.candidate.position


# -- generation ------------------------------------------------------------------------------


def argmax_chat_decode(folder, prompt: str, max_new_tokens: int) -> tuple[str, int]:
    """The reference: the most likely next token after the prompt, until the EOS or <|end|>."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    ids = tok(prompt, add_special_tokens=False)["input_ids"]
    stops = {tok.eos_token_id, tok.convert_tokens_to_ids("<|end|>")}
    new: list[int] = []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            token = int(model(input_ids=torch.tensor([ids + new])).logits[0, -1].argmax())
            if token in stops:
                break
            new.append(token)
    return tok.decode(new, skip_special_tokens=True).strip(), len(new)


def test_a_greedy_response_continues_the_chat_prompt(chat_system, chat_dataset, tiny_chat_gpt2_dir):
    # when the chat system answers the dataset greedily
    generation, job = run("chatty", max_new_tokens=12)
    assert job.status == JobStatus.SUCCEEDED, job.error
    # then the response to a two-turn context is the argmax continuation of the chat prompt
    prompt = f"<|assistant|>{CONTEXTS[1][0]}<|end|><|user|>{CONTEXTS[1][1]}<|end|><|assistant|>"
    expected = argmax_chat_decode(tiny_chat_gpt2_dir, prompt, 12)
    response = next(r for r in GeneratedResponse.objects.filter(generation=generation) if r.context == CONTEXTS[1])
    assert (response.text, response.n_tokens) == expected


def test_a_chat_response_ends_at_the_end_of_turn_token_not_at_a_newline(chat_system):
    generator = generator_for(chat_system, device="cpu")
    tok = generator.tokenizer
    said = tok("Sure.\nSee you at nine.", add_special_tokens=False)["input_ids"]
    rest = tok("<|user|>Thanks", add_special_tokens=False)["input_ids"]
    response = generator._response([*said, tok.convert_tokens_to_ids("<|end|>"), *rest])
    assert (response.text, response.n_tokens) == ("Sure.\nSee you at nine.", len(said))


def test_generation_stops_when_the_model_closes_its_turn(tiny_chat_gpt2_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # given a model that always says <|end|> next
    tok = AutoTokenizer.from_pretrained(tiny_chat_gpt2_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_chat_gpt2_dir).eval()
    end = tok.convert_tokens_to_ids("<|end|>")
    head, final_norm = model.get_output_embeddings().weight, model.transformer.ln_f
    with torch.no_grad():
        # every last hidden state is <|end|>'s row of the head, which is made the longest one
        final_norm.weight.zero_()
        final_norm.bias.copy_(head[end])
        head[end] *= 10
    assert int(model(input_ids=torch.tensor([[3, 4]])).logits[0, -1].argmax()) == end
    generator = LMGenerator(model=model, tokenizer=tok, kind="causal", template=ChatTemplate(tok))
    # when it answers, then its turn is over at once: no token is kept
    [response] = generator.generate([["How are you?"]], decoding=Decoding(max_new_tokens=5))
    assert (response.text, response.n_tokens) == ("", 0)
