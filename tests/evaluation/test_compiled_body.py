"""The compiled body runs a copy of the model's modules that shares its weights, with the tanh GELU
written through a sigmoid (compiled.py)."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from evaluation.scoring.compiled import SigmoidGELU, scoring_copy  # noqa: E402

TANH_GELUS = [
    ("torch GELU(approximate='tanh')", lambda: torch.nn.GELU(approximate="tanh")),
    ("gelu_new", lambda: transformers.activations.ACT2FN["gelu_new"]),
    ("gelu_pytorch_tanh", lambda: transformers.activations.ACT2FN["gelu_pytorch_tanh"]),
    ("gelu_fast", lambda: transformers.activations.ACT2FN["gelu_fast"]),
    ("gelu_accurate", lambda: transformers.activations.ACT2FN["gelu_accurate"]),
]


@pytest.mark.parametrize(("name", "make"), TANH_GELUS, ids=[n for n, _ in TANH_GELUS])
def test_sigmoid_gelu_computes_each_tanh_gelu_to_float32_rounding(name, make):
    # given inputs from deep in the negative tail to large positive values, and +inf (-inf gives
    # NaN in both forms: -inf * 0)
    x = torch.cat([torch.linspace(-30, 30, 20001), torch.tensor([-1e30, 1e30, float("inf")])])
    # when the activation and the sigmoid form run on them
    expected, got = make()(x), SigmoidGELU()(x)
    # then they agree to float32 rounding everywhere (no NaN in either tail)
    assert not got.isnan().any()
    assert torch.allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_scoring_copy_replaces_tanh_gelus_and_shares_every_weight():
    # given a GPT-2 body (gelu_new in each MLP)
    model = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(vocab_size=50, n_positions=32, n_embd=16, n_layer=2, n_head=2)
    )
    body = model.base_model
    # when it is copied for scoring
    clone = scoring_copy(body)
    # then each MLP's activation is the sigmoid form in the copy, and the model keeps its own
    assert [type(block.mlp.act) for block in clone.h] == [SigmoidGELU, SigmoidGELU]
    assert all(type(block.mlp.act).__name__ == "NewGELUActivation" for block in body.h)
    # and the copy holds the model's own parameter and buffer tensors, none copied
    assert {id(p) for p in clone.parameters()} == {id(p) for p in body.parameters()}
    assert {id(b) for b in clone.buffers()} == {id(b) for b in body.buffers()}


def test_scoring_copy_gives_the_bodys_hidden_states():
    # given a GPT-2 body and a batch of token ids
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(vocab_size=50, n_positions=32, n_embd=16, n_layer=2, n_head=2)
    ).eval()
    ids = torch.randint(0, 50, (3, 12))
    # when the body and its scoring copy run on it (eagerly)
    with torch.inference_mode():
        expected = model.base_model(input_ids=ids).last_hidden_state
        got = scoring_copy(model.base_model)(input_ids=ids).last_hidden_state
    # then the hidden states agree to float32 rounding
    assert torch.allclose(got, expected, atol=1e-5)
