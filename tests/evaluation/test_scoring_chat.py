"""Scoring through the tokenizer's chat template: the turns as user/assistant messages, the candidate
as the next assistant message, with every fast path giving the naive path's numbers."""

import pytest
import torch

from core.errors import UserError
from evaluation.scoring import ContextTemplate
from evaluation.scoring.chat import ChatTemplate, chat_messages, chat_template_check
from tests.evaluation.test_scoring import CANDIDATES, CONTEXTS, assert_same, make_scorer
from tests.tiny_models import CHAT_TEMPLATE


@pytest.fixture(scope="module")
def chat_tokenizer(tiny_chat_gpt2_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_chat_gpt2_dir)


def chat_scorer(folder, **options):
    from transformers import AutoTokenizer

    # the tiny model has 96 positions, shared by the context and the candidate limit: 64 for contexts
    options = {"max_candidate_tokens": 32, **options}
    return make_scorer(folder, "causal", template=ChatTemplate(AutoTokenizer.from_pretrained(folder)), **options)


def max_difference(fast, naive) -> float:
    return max(abs(f.loss - n.loss) for fq, nq in zip(fast, naive, strict=True) for f, n in zip(fq, nq, strict=True))


# -- rendering -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        (["How are you?"], "<|user|>How are you?<|end|><|assistant|>"),
        (["Hi.", "How are you?"], "<|assistant|>Hi.<|end|><|user|>How are you?<|end|><|assistant|>"),
        (
            ["Hi.", "Hello.", "How are you?"],
            "<|user|>Hi.<|end|><|assistant|>Hello.<|end|><|user|>How are you?<|end|><|assistant|>",
        ),
    ],
)
def test_the_last_turn_is_a_user_message_and_the_roles_alternate_backwards(chat_tokenizer, turns, expected):
    assert ChatTemplate(chat_tokenizer).render(turns) == expected


def test_chat_messages_carry_the_turns_in_order():
    assert chat_messages(["a", "b", "c", "d"]) == [
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "c"},
        {"role": "user", "content": "d"},
    ]


def test_the_end_of_turn_token_is_the_special_token_after_an_assistant_message(chat_tokenizer):
    assert ChatTemplate(chat_tokenizer).end_of_turn_id == chat_tokenizer.convert_tokens_to_ids("<|end|>")


def test_a_template_that_closes_a_turn_with_nothing_special_ends_it_with_the_eos(chat_tokenizer):
    # given a template that writes a newline after each message
    tokenizer = chat_tokenizer.__class__.from_pretrained(chat_tokenizer.name_or_path)
    tokenizer.chat_template = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    # then the end of an assistant turn is the EOS
    assert ChatTemplate(tokenizer).end_of_turn_id == tokenizer.eos_token_id


def test_a_start_token_the_tokenizer_adds_is_put_in_front_unless_the_template_writes_it(chat_tokenizer):
    from tokenizers import processors

    # given a tokenizer that puts <s> before every text
    tokenizer = chat_tokenizer.__class__.from_pretrained(chat_tokenizer.name_or_path)
    tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tokenizer.bos_token_id)]
    )
    # then the conditioning text starts with it once, whether or not the template writes it
    assert ChatTemplate(tokenizer).render(["Hi."]) == "<s><|user|>Hi.<|end|><|assistant|>"
    tokenizer.chat_template = "{{ bos_token }}" + CHAT_TEMPLATE
    assert ChatTemplate(tokenizer).render(["Hi."]) == "<s><|user|>Hi.<|end|><|assistant|>"
    # and its tokens hold one start token, the special token (not its characters)
    ids = tokenizer(ChatTemplate(tokenizer).render(["Hi."]), add_special_tokens=False)["input_ids"]
    assert ids[0] == tokenizer.bos_token_id and ids.count(tokenizer.bos_token_id) == 1


def test_a_long_context_loses_its_oldest_turns_whole(tiny_chat_gpt2_dir, chat_tokenizer):
    # given a limit that the last two turns fit and the last three do not
    turns = ["Hi.", "Hello.", "How are you?"]
    two = "<|assistant|>Hello.<|end|><|user|>How are you?<|end|><|assistant|>"
    limit = len(chat_tokenizer(two, add_special_tokens=False)["input_ids"])
    scorer = chat_scorer(tiny_chat_gpt2_dir, max_context_tokens=limit)
    # then the context keeps its last two turns and the template's start
    assert scorer.render(turns) == two
    # and a last turn too long alone keeps its end, as in the plain template
    short = chat_scorer(tiny_chat_gpt2_dir, max_context_tokens=3)
    encoded = short.encode([short.render(turns)], [["Yes."]])
    assert encoded[0].context == chat_tokenizer(two, add_special_tokens=False)["input_ids"][-3:]


# -- errors ----------------------------------------------------------------------------------


def test_a_tokenizer_without_a_chat_template_is_refused(tiny_gpt2_dir):
    from transformers import AutoTokenizer

    with pytest.raises(UserError, match="has no chat template"):
        ChatTemplate(AutoTokenizer.from_pretrained(tiny_gpt2_dir))


def test_a_template_that_refuses_a_context_starting_with_the_assistant_is_refused(chat_tokenizer):
    tokenizer = chat_tokenizer.__class__.from_pretrained(chat_tokenizer.name_or_path)
    tokenizer.chat_template = (
        "{% if messages[0]['role'] != 'user' %}{{ raise_exception('roles must alternate user/assistant') }}"
        "{% endif %}" + CHAT_TEMPLATE
    )
    with pytest.raises(UserError, match="cannot render a 2-turn context.*roles must alternate"):
        chat_template_check(tokenizer)


# -- scoring ---------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["packed", "kv-cache"])
def test_fast_path_equals_naive_path_through_the_chat_template(strategy, tiny_chat_gpt2_dir):
    # given the tiny chat GPT-2 scoring through its template
    scorer = chat_scorer(tiny_chat_gpt2_dir, batch_tokens=256, strategy=strategy)
    # when both paths score questions of 1 to 5 turns
    fast = scorer.score(CONTEXTS, CANDIDATES)
    naive = scorer.score(CONTEXTS, CANDIDATES, naive=True)
    # then losses agree within 1e-4 and the same candidates are selected
    assert_same(fast, naive)
    assert max_difference(fast, naive) < 1e-4


@pytest.mark.parametrize("strategy", ["packed", "kv-cache"])
def test_fast_path_equals_naive_path_through_the_chat_template_when_truncated(strategy, tiny_chat_gpt2_dir):
    # given limits that drop turns and cut candidates, and the end-of-turn token scored
    scorer = chat_scorer(
        tiny_chat_gpt2_dir,
        strategy=strategy,
        max_context_tokens=20,
        max_candidate_tokens=5,
        eos_after_candidate=True,
        batch_tokens=96,
    )
    fast = scorer.score(CONTEXTS, CANDIDATES)
    naive = scorer.score(CONTEXTS, CANDIDATES, naive=True)
    assert_same(fast, naive)
    assert all(s.n_tokens <= 5 for q in fast for s in q)


def test_the_candidate_is_scored_as_the_continuation_of_the_rendered_template(tiny_chat_gpt2_dir, chat_tokenizer):
    from transformers import AutoModelForCausalLM

    # given a question and the conditioning text written out by hand
    turns, candidate = ["Hi.", "How much is this jacket?"], "It is forty dollars."
    prompt = "<|assistant|>Hi.<|end|><|user|>How much is this jacket?<|end|><|assistant|>"
    # when the model reads prompt + candidate as one text (as lm-eval encodes a pair)
    model = AutoModelForCausalLM.from_pretrained(tiny_chat_gpt2_dir).eval()
    ids = chat_tokenizer(prompt + candidate, add_special_tokens=False)["input_ids"]
    n = len(chat_tokenizer(candidate, add_special_tokens=False)["input_ids"])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), dim=-1)
    expected = sum(float(logprobs[i - 1, ids[i]]) for i in range(len(ids) - n, len(ids)))
    # then the scorer gives the summed log-probability of the candidate's tokens after the prompt
    [[score]] = chat_scorer(tiny_chat_gpt2_dir).score([turns], [[candidate]])
    assert score.n_tokens == n
    assert score.sum_logprob == pytest.approx(expected, abs=1e-4)


def test_the_end_of_turn_token_follows_the_candidate_with_eos_after_candidate(tiny_chat_gpt2_dir, chat_tokenizer):
    scorer = chat_scorer(tiny_chat_gpt2_dir, eos_after_candidate=True)
    [question] = scorer.encode([scorer.render(["Hi."])], [["Yes.", ""]])
    end = chat_tokenizer.convert_tokens_to_ids("<|end|>")
    assert question.candidates[0] == [*chat_tokenizer("Yes.", add_special_tokens=False)["input_ids"], end]
    # an empty candidate is scored as the end of the turn
    assert question.candidates[1] == [end]


def test_the_chat_template_changes_the_losses(tiny_chat_gpt2_dir):
    # given the same model scoring through its chat template and through the plain template
    chat = chat_scorer(tiny_chat_gpt2_dir).score(CONTEXTS, CANDIDATES, naive=True)
    plain = make_scorer(tiny_chat_gpt2_dir, "causal", template=ContextTemplate(), max_candidate_tokens=32).score(
        CONTEXTS, CANDIDATES, naive=True
    )
    # then the same candidate tokens get other losses: the template is what the model reads
    assert [[s.n_tokens for s in q] for q in chat] == [[s.n_tokens for s in q] for q in plain]
    assert max_difference(chat, plain) > 1e-3
    assert all(c.loss != p.loss for cq, pq in zip(chat, plain, strict=True) for c, p in zip(cq, pq, strict=True))


def test_losses_match_lm_evals_loglikelihood_on_its_chat_template_rendering(tiny_chat_gpt2_dir):
    pytest.importorskip("lm_eval", reason="lm-eval is in the optional 'bench' extra")
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    # given lm-eval's HFLM around the same model, rendering each context with its chat template
    scorer = chat_scorer(tiny_chat_gpt2_dir)
    lm = HFLM(pretrained=scorer.model, tokenizer=scorer.tokenizer, batch_size=4, max_length=96)
    requests = [
        Instance("loglikelihood", doc={}, arguments=(lm.apply_chat_template(chat_messages(turns)), candidate), idx=k)
        for turns, candidates in zip(CONTEXTS[:2], CANDIDATES[:2], strict=True)
        for k, candidate in enumerate(candidates)
    ]
    expected = [ll for ll, _ in lm.loglikelihood(requests, disable_tqdm=True)]
    # then our chat path gives the same summed log-probabilities
    ours = [s.sum_logprob for q in scorer.score(CONTEXTS[:2], CANDIDATES[:2]) for s in q]
    assert ours == pytest.approx(expected, abs=1e-4)
