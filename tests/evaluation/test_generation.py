"""The generate job: one response per context of a dataset, greedy or seeded nucleus, resumable."""

import pytest
import torch

from annotation.models import Candidate, Question
from core.errors import UserError
from core.models import Job, JobStatus
from core.services.jobs import job_execute
from evaluation.metrics.diversity import distinct_n
from evaluation.models import EvaluationStatus, GeneratedResponse, Generation, System
from evaluation.scoring.decoding import Decoding, context_seed, cut, stop_text
from evaluation.scoring.generate import generator_for
from evaluation.scoring.lm_generate import LMGenerator
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services.generations import generation_start
from evaluation.services.systems import system_register
from tests.evaluation.generation_support import (
    CONTEXTS,
    PLUGINS,
    EchoPlugin,
    run,
    texts,
)
from tests.factories import QuestionFactory
from tests.tiny_models import TEXTS


@pytest.fixture(autouse=True)
def no_loaded_systems():
    # systems registered here are loaded by the workers' cache; the next test starts without them
    yield
    scorer_cache_clear()


def argmax_decode(folder, kind: str, prompt: str, max_new_tokens: int) -> tuple[str, int]:
    """The reference: one token at a time, the most likely next token, until EOS or a newline."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    auto = AutoModelForCausalLM if kind == "causal" else AutoModelForSeq2SeqLM
    model = auto.from_pretrained(folder).eval()
    prompt_ids = tok(prompt)["input_ids"]
    new: list[int] = []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if kind == "causal":
                logits = model(input_ids=torch.tensor([prompt_ids + new])).logits[0, -1]
            else:
                decoder = [model.config.decoder_start_token_id, *new]
                logits = model(input_ids=torch.tensor([prompt_ids]), decoder_input_ids=torch.tensor([decoder])).logits
                logits = logits[0, -1]
            token = int(logits.argmax())
            if token == tok.eos_token_id:
                break
            if "\n" in tok.decode([*new, token], skip_special_tokens=True):
                break
            new.append(token)
    return tok.decode(new, skip_special_tokens=True).strip(), len(new)


# -- decoding --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_greedy_response_is_the_argmax_continuation_of_the_rendered_context(
    kind, db, tiny_gpt2_dir, tiny_bart_dir, chat_dataset
):
    # given a system with speaker tags and a newline separator
    folder = tiny_gpt2_dir if kind == "causal" else tiny_bart_dir
    system_register(name="tiny", kind=kind, checkpoint=str(folder), speaker_tags=True)
    # when it answers the dataset greedily
    generation, job = run("tiny", max_new_tokens=12)
    assert job.status == JobStatus.SUCCEEDED, job.error
    # then the response to a two-turn context is the argmax continuation of the rendered template
    question = Question.objects.get(context__turns__position=1, context__turns__text=CONTEXTS[1][1])
    prompt = f"A: {CONTEXTS[1][0]}\nB: {CONTEXTS[1][1]}\nA: "
    expected_text, expected_tokens = argmax_decode(folder, kind, prompt, 12)
    response = GeneratedResponse.objects.get(generation=generation, context_key=f"q{question.pk}")
    assert (response.text, response.n_tokens) == (expected_text, expected_tokens)
    assert response.context == CONTEXTS[1] and response.references == [question.ground_truth]
    assert response.question == question


def test_greedy_responses_do_not_depend_on_the_batch(gpt_system):
    # when the same contexts are answered one at a time and in one batch (sorted by length, left padded)
    alone = generator_for(gpt_system, device="cpu", batch_size=1).generate(
        CONTEXTS, decoding=Decoding(max_new_tokens=10)
    )
    together = generator_for(gpt_system, device="cpu", batch_size=8).generate(
        CONTEXTS, decoding=Decoding(max_new_tokens=10)
    )
    # then the responses are the same, in the order of the contexts
    assert together == alone
    assert len({r.text for r in alone}) > 1


def test_a_nucleus_response_depends_on_its_seed_not_on_its_batch(gpt_system):
    # given per-context seeds
    nucleus = Decoding(strategy="nucleus", top_p=1.0, temperature=2.0, max_new_tokens=10)
    seeds = [context_seed(7, f"q{i}") for i in range(len(CONTEXTS))]
    # when the contexts are sampled alone and in one batch
    alone = generator_for(gpt_system, device="cpu", batch_size=1).generate(CONTEXTS, decoding=nucleus, seeds=seeds)
    together = generator_for(gpt_system, device="cpu", batch_size=8).generate(CONTEXTS, decoding=nucleus, seeds=seeds)
    # then each context got the same sample, which greedy decoding would not give
    assert together == alone
    greedy = generator_for(gpt_system, device="cpu").generate(CONTEXTS, decoding=Decoding(max_new_tokens=10))
    assert [r.text for r in alone] != [r.text for r in greedy]


def test_the_same_seed_gives_the_same_nucleus_responses(gpt_system, chat_dataset):
    # given nucleus sampling at a high temperature
    options = {"strategy": "nucleus", "top_p": 1.0, "temperature": 2.0, "max_new_tokens": 10}
    first = texts(run(seed=1, **options)[0])
    # when the seed changes, then back
    second = texts(run(seed=2, **options)[0])
    again = texts(run(seed=1, **options)[0])
    # then another seed gives other responses (old ones replaced), and the same seed the same ones
    assert len(first) == len(second) == len(CONTEXTS)
    assert second != first
    assert again == first
    assert Generation.objects.count() == 1


def test_responses_stop_at_the_turn_separator(gpt_system):
    # given the generator of a system whose turns are separated by newlines
    generator = generator_for(gpt_system, device="cpu")
    tok = generator.tokenizer
    kept = tok("Sure, I will.", add_special_tokens=False)["input_ids"]
    rest = tok("\nB: Thanks", add_special_tokens=False)["input_ids"]
    # when a generated sequence goes on to the next turn, then the response stops before it
    assert generator._response([*kept, *rest, tok.eos_token_id]).text == "Sure, I will."
    assert generator._response([*kept, *rest]).n_tokens == len(kept)
    # and stops at the end of sequence otherwise
    assert generator._response([*kept, tok.eos_token_id, *rest]).n_tokens == len(kept)


def test_stop_rules_follow_the_separator():
    assert stop_text("\n") == "\n" and stop_text("{eos}\n") == "\n"
    assert stop_text(" __eou__ ") == "__eou__"
    assert stop_text("{eos}") is None and stop_text(" ") is None
    assert cut(" yes __eou__ no", "__eou__") == "yes"


def test_a_long_context_keeps_its_end(db, tiny_gpt2_dir):
    # given a system that reads at most 8 context tokens
    system = system_register(name="short", kind="causal", checkpoint=str(tiny_gpt2_dir), max_context_tokens=8)
    generator = generator_for(system, device="cpu")
    assert isinstance(generator, LMGenerator)
    # when a long context is encoded, then only its last 8 tokens are kept
    full = generator.tokenizer(generator.render(TEXTS[:4]), add_special_tokens=False)["input_ids"]
    assert generator.encode([TEXTS[:4]], max_new_tokens=10) == [full[-8:]]


def test_a_response_longer_than_the_model_positions_fails_clearly(gpt_system, chat_dataset):
    generation, job = run(max_new_tokens=200)
    assert (job.status, generation.status) == (JobStatus.FAILED, EvaluationStatus.FAILED)
    assert "200 new tokens do not fit the model's 96 positions" in generation.error


# -- the job -----------------------------------------------------------------------------------


def test_a_rerun_generates_only_the_missing_responses(gpt_system, chat_dataset, monkeypatch):
    # given a finished greedy generation of which half the responses were deleted
    generation, _ = run(max_new_tokens=8)
    before = texts(generation)
    deleted = list(GeneratedResponse.objects.order_by("id").values_list("id", flat=True)[::2])
    kept = set(GeneratedResponse.objects.exclude(id__in=deleted).values_list("id", flat=True))
    GeneratedResponse.objects.filter(id__in=deleted).delete()
    generated = []
    original = LMGenerator.generate

    def counting(self, contexts, **kwargs):
        generated.extend(contexts)
        return original(self, contexts, **kwargs)

    monkeypatch.setattr(LMGenerator, "generate", counting)
    # when it is started again
    generation, job = run(max_new_tokens=8)
    # then only the deleted contexts were generated again, with the same greedy responses
    assert job.status == JobStatus.SUCCEEDED
    assert len(generated) == len(deleted) == 3
    assert kept <= set(GeneratedResponse.objects.values_list("id", flat=True))
    assert texts(generation) == before
    assert job.result["responses"] == len(CONTEXTS)


def test_a_failed_run_resumes_where_it_stopped(echo_system, chat_dataset):
    # given a plugin that fails on its second batch of two contexts
    EchoPlugin.fail_on_call = 2
    generation, job = run("echo", batch_size=2)
    assert (job.status, generation.status) == (JobStatus.FAILED, EvaluationStatus.FAILED)
    assert "scripted failure" in generation.error
    assert GeneratedResponse.objects.count() == 2
    # when it runs again
    EchoPlugin.fail_on_call = None
    generation, job = run("echo", batch_size=2)
    # then the two remaining batches were generated, nothing twice
    assert job.status == JobStatus.SUCCEEDED
    assert len(EchoPlugin.calls) == 2 + 2
    assert GeneratedResponse.objects.count() == len(CONTEXTS)


def test_a_cancelled_job_keeps_its_finished_batches(echo_system, chat_dataset):
    # given a researcher who cancels the job while its first batch is generated
    EchoPlugin.cancel_on_call = 1
    generation, job = run("echo", batch_size=2)
    # then it stops after that batch, which stays saved
    assert (job.status, generation.status) == (JobStatus.CANCELLED, EvaluationStatus.CANCELLED)
    assert GeneratedResponse.objects.count() == 2
    assert len(EchoPlugin.calls) == 1


def test_a_plugin_generates_with_per_context_seeds(echo_system, chat_dataset):
    # when a plugin system answers with nucleus sampling
    generation, job = run("echo", strategy="nucleus", seed=3)
    # then it got the contexts' turns and one seed per context, derived from the generation's seed
    call = EchoPlugin.calls[0]
    responses = {r.context_key: r for r in GeneratedResponse.objects.filter(generation=generation)}
    keys = [f"q{q.pk}" for q in Question.objects.order_by("id")]
    assert sorted(map(tuple, call["contexts"])) == sorted(tuple(r.context) for r in responses.values())
    by_context = {tuple(r.context): key for key, r in responses.items()}
    assert call["seeds"] == [context_seed(3, by_context[tuple(c)]) for c in call["contexts"]]
    # and its responses are stored stripped, without a token count
    assert set(responses) == set(keys)
    assert all(r.text == f"echo {r.context[-1]}" and r.n_tokens is None for r in responses.values())
    # and the summary measures them
    all_texts = [r.text for r in responses.values()]
    assert job.result["responses"] == len(CONTEXTS)
    assert job.result["distinct_1"] == pytest.approx(distinct_n(all_texts, 1))
    assert job.result["distinct_2"] == pytest.approx(distinct_n(all_texts, 2))
    assert job.result["mean_tokens"] is None
    assert job.result["mean_words"] == pytest.approx(sum(len(t.split()) for t in all_texts) / len(all_texts))


def test_a_plugin_without_generate_cannot_generate(db, chat_dataset):
    system_register(name="scorer", kind="plugin", plugin=f"{PLUGINS}.ScoreOnlyPlugin")
    with pytest.raises(UserError, match="no generate"):
        generation_start(system_name="scorer", dataset_name="chat", enqueue=False)
    assert not Job.objects.exists()


def test_a_nul_byte_in_a_response_is_dropped_before_it_is_stored(db, chat_dataset):
    # given a system whose responses hold a NUL (PostgreSQL's text type refuses it)
    system_register(name="nul", kind="plugin", plugin=f"{PLUGINS}.NulPlugin")
    # when it answers the dataset, then the job succeeds and the text keeps everything else
    generation, job = run(system_name="nul")
    assert job.status == "succeeded"
    assert set(texts(generation).values()) == {"fine thanks"}


def test_an_external_system_cannot_generate(db, chat_dataset):
    System.objects.create(name="zhao-s2s", kind="external")
    with pytest.raises(UserError, match="external"):
        generation_start(system_name="zhao-s2s", dataset_name="chat", enqueue=False)


@pytest.mark.parametrize(
    "options, message",
    [({"strategy": "beam"}, "strategy"), ({"top_p": 0.0}, "top-p"), ({"temperature": 0}, "temperature")],
)
def test_bad_decoding_options_are_refused(echo_system, chat_dataset, options, message):
    with pytest.raises(UserError, match=message):
        generation_start(system_name="echo", dataset_name="chat", enqueue=False, **options)
    assert not Generation.objects.exists()


def test_derived_questions_share_the_response_of_their_context(echo_system, chat_dataset):
    # given a question derived from another one (same context, another ground truth)
    original = Question.objects.order_by("id").first()
    candidate = Candidate.objects.create(question=original, text="Another answer.", text_hash="x", source="lexical")
    derived = Question.objects.create(
        dataset=chat_dataset,
        context=original.context,
        ground_truth=candidate.text,
        derived_from=original,
        derived_ground_truth=candidate,
    )
    # when the dataset is answered
    generation, job = run("echo")
    # then only the original questions got a response
    keys = set(GeneratedResponse.objects.values_list("context_key", flat=True))
    assert f"q{derived.pk}" not in keys and f"q{original.pk}" in keys
    assert len(keys) == len(CONTEXTS) == job.result["responses"]


def test_a_finished_generation_is_not_run_again_until_the_dataset_grows(echo_system, chat_dataset):
    run("echo")
    generation, job = generation_start(system_name="echo", dataset_name="chat", enqueue=False)
    assert job is None and generation.status == EvaluationStatus.SUCCEEDED
    # a greedy generation ignores the sampling options
    assert generation_start(system_name="echo", dataset_name="chat", enqueue=False, seed=5)[1] is None
    # a new question needs a response
    QuestionFactory(dataset=chat_dataset)
    generation, job = run("echo")
    assert GeneratedResponse.objects.count() == len(CONTEXTS) + 1
    assert sum(len(call["contexts"]) for call in EchoPlugin.calls) == len(CONTEXTS) + 1


def test_responses_of_an_edited_system_are_replaced(echo_system, chat_dataset):
    # given a finished generation
    generation, _ = run("echo")
    old = set(GeneratedResponse.objects.values_list("id", flat=True))
    # when the system is edited and asked again
    system_register(name="echo", kind="plugin", plugin=f"{PLUGINS}.EchoPlugin", description="edited")
    generation, job = run("echo")
    # then every context was answered anew
    assert job.status == JobStatus.SUCCEEDED
    assert old.isdisjoint(GeneratedResponse.objects.values_list("id", flat=True))
    assert GeneratedResponse.objects.count() == len(CONTEXTS)


def test_decoding_cannot_change_while_a_job_runs_or_once_responses_are_rated(echo_system, chat_dataset):
    # given a queued greedy generation
    generation, job = generation_start(system_name="echo", dataset_name="chat", enqueue=False)
    # then asking again returns its job, and changing its decoding is refused
    assert generation_start(system_name="echo", dataset_name="chat", enqueue=False)[1] == job
    with pytest.raises(UserError, match="still running"):
        generation_start(system_name="echo", dataset_name="chat", enqueue=False, strategy="nucleus")
    # given its responses, one of them sent to annotators
    job_execute(job_id=job.pk)
    response = GeneratedResponse.objects.first()
    response.candidate = Candidate.objects.filter(question=response.question).first()
    response.save()
    # then they are not discarded by a change of decoding
    with pytest.raises(UserError, match="sent to annotators"):
        generation_start(system_name="echo", dataset_name="chat", enqueue=False, strategy="nucleus")
    assert GeneratedResponse.objects.count() == len(CONTEXTS)
