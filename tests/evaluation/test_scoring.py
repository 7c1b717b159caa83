"""The fast scoring path gives the naive path's numbers (one full forward per context-candidate pair)."""

import math

import pytest
from django.utils.module_loading import import_string

from evaluation.scoring import CandidateScore, ContextTemplate, select
from evaluation.scoring.plugin import PluginScorer

CONTEXTS = [
    ["Did you book the tickets?", "Not yet, the site was down all morning.", "Can you try again tonight?"],
    ["How much is this jacket?"],
    [
        "My sister is coming to visit next week.",
        "That's nice! Where will she stay?",
        "With us, of course. Could you help me carry these boxes upstairs?",
        "Sure.",
        "Thanks, the weather is lovely, isn't it?",
    ],
    ["What time does the museum open on Sundays?", "At ten, I think."],
]
CANDIDATES = [
    [
        "Sure, I will try again after dinner.",
        "The train leaves at nine.",
        "Yes.",
        "I'm sorry, I didn't catch your name.",
    ],
    ["It is forty dollars, but it is on sale today.", "Coffee, please.", "No", "Let's meet at noon."],
    ["Yes, it is.", "It is forty dollars.", "Could you help me carry these boxes upstairs, please, right now?"],
    ["Great, let's go together.", "My sister.", "The library at noon.", "Nine o'clock, platform two.", "Okay."],
]


def make_scorer(folder, kind, **options):
    from evaluation.scoring.checkpoints import load_model
    from evaluation.scoring.lm import LMScorer

    model, tokenizer = load_model(kind=kind, checkpoint=str(folder), dtype="float32", device="cpu")
    return LMScorer(model=model, tokenizer=tokenizer, kind=kind, **options)


def assert_same(fast, naive):
    assert [len(q) for q in fast] == [len(q) for q in naive]
    for fast_q, naive_q in zip(fast, naive, strict=True):
        for f, n in zip(fast_q, naive_q, strict=True):
            assert f.n_tokens == n.n_tokens
            assert f.loss == pytest.approx(n.loss, abs=1e-4)
            assert f.sum_logprob == pytest.approx(n.sum_logprob, abs=1e-4 * n.n_tokens)
        assert select(fast_q) == select(naive_q)
        assert select(fast_q, rule="sum") == select(naive_q, rule="sum")


KINDS = [("causal", "packed"), ("causal", "kv-cache"), ("seq2seq", "packed")]


@pytest.mark.parametrize(("kind", "strategy"), KINDS)
def test_fast_path_equals_naive_path_on_varied_lengths(kind, strategy, tiny_gpt2_dir, tiny_bart_dir):
    # given a tiny model and questions with contexts and candidates of varied lengths
    folder = tiny_gpt2_dir if kind == "causal" else tiny_bart_dir
    scorer = make_scorer(folder, kind, batch_tokens=256, strategy=strategy)
    # when both paths score them
    fast = scorer.score(CONTEXTS, CANDIDATES)
    naive = scorer.score(CONTEXTS, CANDIDATES, naive=True)
    # then losses agree within 1e-4 and the same candidates are selected
    assert_same(fast, naive)
    assert all(math.isfinite(s.loss) and s.n_tokens >= 1 for q in fast for s in q)


@pytest.mark.parametrize(("kind", "strategy"), KINDS)
def test_fast_path_equals_naive_path_when_contexts_and_candidates_are_truncated(
    kind, strategy, tiny_gpt2_dir, tiny_bart_dir
):
    # given limits shorter than most contexts and candidates, and an end-of-sequence token scored
    scorer = make_scorer(
        tiny_gpt2_dir if kind == "causal" else tiny_bart_dir,
        kind,
        strategy=strategy,
        max_context_tokens=7,
        max_candidate_tokens=5,
        eos_after_candidate=True,
    )
    encoded = scorer.encode([scorer.render(c) for c in CONTEXTS], CANDIDATES)
    # then a context keeps its last tokens, a candidate its first ones plus the end of sequence
    assert max(len(q.context) for q in encoded) <= 7 + (2 if kind == "seq2seq" else 0)
    assert all(len(c) <= 5 and c[-1] == scorer.eos_id for q in encoded for c in q.candidates)
    # and both paths still agree
    assert_same(scorer.score_encoded(encoded), scorer.score_encoded(encoded, naive=True))


@pytest.mark.parametrize("strategy", ["packed", "kv-cache"])
def test_causal_batches_of_one_question_give_the_same_losses_as_one_big_batch(strategy, tiny_gpt2_dir):
    # given the same questions scored with a tiny and a large batch budget
    small = make_scorer(tiny_gpt2_dir, "causal", batch_tokens=1, strategy=strategy).score(CONTEXTS, CANDIDATES)
    large = make_scorer(tiny_gpt2_dir, "causal", batch_tokens=100_000, strategy=strategy).score(CONTEXTS, CANDIDATES)
    # then padding makes no difference
    assert_same(small, large)


def test_loss_is_the_mean_of_the_token_cross_entropies(tiny_gpt2_dir):
    # given a scored candidate
    score = make_scorer(tiny_gpt2_dir, "causal").score(CONTEXTS[:1], [CANDIDATES[0][:1]])[0][0]
    # then loss = -(summed log-probability) / number of tokens, per candidate
    assert score.n_tokens > 1
    assert score.loss == pytest.approx(-score.sum_logprob / score.n_tokens)


def test_template_joins_turns_and_tags_speakers_so_that_the_candidate_is_the_next_turn():
    # given a template with speaker tags and an end-of-sequence separator
    template = ContextTemplate(separator="{eos}", speaker_tags=True)
    # when it renders three turns
    text = template.render(["Hi.", "Hello.", "How are you?"], eos="</s>")
    # then the speakers alternate and the candidate's speaker tag ends the text
    assert text == "B: Hi.</s>A: Hello.</s>B: How are you?</s>A: "


def test_selection_takes_the_lowest_loss_or_the_highest_summed_log_probability():
    scores = [CandidateScore(2.0, -10.0, 5), CandidateScore(1.5, -12.0, 8), CandidateScore(3.0, -9.0, 3)]
    assert select(scores) == 1
    assert select(scores, rule="sum") == 2


def test_plugin_scorer_returns_the_plugin_losses():
    # given a plugin whose loss is the candidate length
    scorer = PluginScorer.from_class(import_string("tests.evaluation.plugins.ShortestWinsPlugin"))
    # when it scores a question
    scores = scorer.score([["Hi."]], [["a long answer", "short", "medium one"]])
    # then the losses are the plugin's and the shortest candidate is selected
    assert [s.loss for s in scores[0]] == [13.0, 5.0, 10.0]
    assert select(scores[0]) == 1


def test_plugin_scorer_refuses_a_wrong_number_of_losses():
    scorer = PluginScorer.from_class(import_string("tests.evaluation.plugins.BrokenPlugin"))
    with pytest.raises(ValueError, match="2 finite losses per question"):
        scorer.score([["Hi."]], [["a", "b"]])


def test_models_that_rescale_their_logits_are_scored_by_the_naive_path(tiny_gpt2_dir, monkeypatch):
    # given a causal model whose config says its logits are scaled after the output head
    from evaluation.scoring.checkpoints import load_model
    from evaluation.scoring.lm import LMScorer

    model, tokenizer = load_model(kind="causal", checkpoint=str(tiny_gpt2_dir), dtype="float32", device="cpu")
    model.config.final_logit_softcapping = 30.0
    scorer = LMScorer(model=model, tokenizer=tokenizer, kind="causal")
    monkeypatch.setattr(scorer.lm, "score_fast", lambda scorer, questions: pytest.fail("fast path used"))
    # when it scores, then the naive path (the model's own logits) gives the numbers
    assert_same(scorer.score(CONTEXTS[:2], CANDIDATES[:2]), scorer.score(CONTEXTS[:2], CANDIDATES[:2], naive=True))


@pytest.mark.heavy  # scoring numerics: no database in it
@pytest.mark.parametrize(
    ("strategy", "compile_model"),
    [("packed", False), ("kv-cache", False), ("packed", True)],
    ids=["packed", "kv-cache", "packed-compiled"],
)
def test_fast_path_equals_naive_path_on_a_llama_shaped_model(strategy, compile_model, tiny_tokenizer_dir):
    # given a tiny Llama (rotary positions, grouped KV heads, SiLU MLP, as in the benchmark's 1b preset)
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from evaluation.scoring.lm import LMScorer

    tokenizer = AutoTokenizer.from_pretrained(tiny_tokenizer_dir)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=128,
        initializer_range=0.2,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    scorer = LMScorer(
        model=LlamaForCausalLM(config),
        tokenizer=tokenizer,
        kind="causal",
        batch_tokens=300,
        strategy=strategy,
        compile_model=compile_model,
    )
    # when the fast path scores the questions
    fast = scorer.score(CONTEXTS, CANDIDATES)
    # then it agrees with the naive path; the packed body had its last MLP cut to the rows read
    assert_same(fast, scorer.score(CONTEXTS, CANDIDATES, naive=True))
    if strategy == "packed":
        packed = scorer.body.module if compile_model else scorer.packed_body
        assert type(packed.body.layers[-1].mlp).__name__ == "RowSubsetMLP"
        assert not compile_model or scorer.body.failed == ""


def test_packed_path_scores_one_token_candidates_from_the_context_alone(tiny_gpt2_dir):
    # given candidates cut to one token: the packed row feeds the context and nothing of them
    scorer = make_scorer(tiny_gpt2_dir, "causal", max_candidate_tokens=1)
    encoded = scorer.encode([scorer.render(c) for c in CONTEXTS], CANDIDATES)
    assert all(len(c) == 1 for q in encoded for c in q.candidates)
    # when both paths score them, then they agree
    assert_same(scorer.score_encoded(encoded), scorer.score_encoded(encoded, naive=True))


@pytest.mark.slow
@pytest.mark.heavy  # scoring numerics: no database in it
def test_compiled_packed_path_equals_naive_path(tiny_gpt2_dir):
    # given a scorer whose body is torch.compile'd (inductor compiles it on the first batch)
    scorer = make_scorer(tiny_gpt2_dir, "causal", batch_tokens=256, compile_model=True)
    # when it scores questions of varied lengths, in batches of several widths
    fast = scorer.score(CONTEXTS, CANDIDATES)
    # then it really ran compiled, and its losses are the naive path's within 1e-4
    assert scorer.body is not None and scorer.body.failed == ""
    assert_same(fast, scorer.score(CONTEXTS, CANDIDATES, naive=True))


def test_a_body_that_fails_to_compile_falls_back_to_eager_mode(tiny_gpt2_dir, monkeypatch, caplog):
    # given torch.compile returning a function that fails, as inductor does without a C++ compiler
    import torch

    def broken(*args, **kwargs):
        raise RuntimeError("InductorError: no C++ compiler found")

    monkeypatch.setattr(torch, "compile", lambda module, **options: broken)
    scorer = make_scorer(tiny_gpt2_dir, "causal", batch_tokens=64, compile_model=True)
    # when it scores, in several batches
    with caplog.at_level("WARNING", logger="evaluation.scoring.compiled"):
        fast = scorer.score(CONTEXTS, CANDIDATES)
    # then the eager body gives the numbers, and the failure is said once
    assert_same(fast, scorer.score(CONTEXTS, CANDIDATES, naive=True))
    assert scorer.body.failed == "RuntimeError: InductorError: no C++ compiler found"
    warnings = [r.getMessage() for r in caplog.records if "torch.compile failed" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].endswith("scoring in eager mode (RuntimeError: InductorError: no C++ compiler found)")


def test_output_head_in_chunks_gives_the_log_probabilities_of_one_call():
    # given hidden states of 10 positions, an output head and a target token per position
    import torch

    from evaluation.scoring.packed import target_logprobs

    torch.manual_seed(0)
    head = torch.nn.Linear(16, 50, bias=False)
    hidden, targets = torch.randn(10, 16), torch.randint(0, 50, (10,))
    expected = torch.log_softmax(head(hidden), dim=-1)[torch.arange(10), targets]
    # when the head runs over chunks of 3 rows (the last chunk shorter) and over one chunk
    chunked = target_logprobs(head, hidden, targets, chunk=3)
    whole = target_logprobs(head, hidden, targets, chunk=10)
    # then every row gets its own target's log-probability either way (up to the products' rounding)
    assert torch.allclose(chunked, expected, atol=1e-6)
    assert torch.allclose(whole, expected, atol=1e-6)


@pytest.mark.parametrize(("vocab", "rows"), [(8192, 256), (32000, 128), (50257, 128), (1000, 2097)])
def test_a_cpu_head_chunk_keeps_its_logits_near_two_million_floats_and_at_least_128_rows(vocab, rows):
    import torch

    from evaluation.scoring.packed import head_chunk_rows

    # given a CPU, then the chunk's rows follow the vocabulary; given a GPU, then chunks are large
    assert head_chunk_rows(torch.device("cpu"), vocab) == rows
    assert head_chunk_rows(torch.device("cuda"), vocab) == 4096


def test_the_eager_packed_path_runs_a_weight_sharing_copy_of_the_body(tiny_gpt2_dir, products_in_torch):
    # given an eager packed scorer of a GPT-2 (gelu_new), its products torch's
    scorer = make_scorer(tiny_gpt2_dir, "causal")
    body = scorer.packed_body.body
    # then it runs a copy of the body with torch's fused GELU and a cut last MLP, on the model's weights
    assert body is not scorer.model.base_model
    assert type(body.h[0].mlp.act).__name__ == "FusedTanhGELU"
    assert type(body.h[-1].mlp).__name__ == "RowSubsetMLP"
    assert type(scorer.model.base_model.h[0].mlp.act).__name__ == "NewGELUActivation"
    assert {id(p) for p in body.parameters()} == {id(p) for p in scorer.model.base_model.parameters()}


@pytest.mark.parametrize("strategy", ["packed", "kv-cache"])
def test_a_candidate_longer_than_the_position_embeddings_is_cut_to_fit_them(tiny_gpt2_dir, strategy):
    # given a causal model of 96 positions, the default candidate limit (128 tokens, more than
    # that) and a candidate of several hundred tokens beside a short one
    scorer = make_scorer(tiny_gpt2_dir, "causal", strategy=strategy)
    positions = scorer.model.config.n_positions
    long = " ".join(["the station is closed on sundays, and the museum too"] * 40)
    # when both are scored, on the fast path and the naive one
    encoded = scorer.encode([scorer.render(CONTEXTS[0])], [[long, "Okay."]])
    fast, naive = scorer.score_encoded(encoded), scorer.score_encoded(encoded, naive=True)
    # then context and candidate fit the positions, and both paths agree
    assert len(encoded[0].context) + max(len(c) for c in encoded[0].candidates) <= positions
    assert fast[0][0].n_tokens == positions - len(encoded[0].context)
    assert_same(fast, naive)
