"""The packed path runs a copy of the body's modules that shares its weights, with the tanh GELU in
the fastest form for eager or compiled runs and the last layer's MLP only where an output is read
(body.py)."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from evaluation.scoring.body import (  # noqa: E402
    FusedTanhGELU,
    PackedBody,
    RowSubsetMLP,
    SigmoidGELU,
    packed_body,
    scoring_copy,
)
from tests.evaluation.scoring_models import gpt2, opt  # noqa: E402

TANH_GELUS = [
    ("torch GELU(approximate='tanh')", lambda: torch.nn.GELU(approximate="tanh")),
    ("gelu_new", lambda: transformers.activations.ACT2FN["gelu_new"]),
    ("gelu_pytorch_tanh", lambda: transformers.activations.ACT2FN["gelu_pytorch_tanh"]),
    ("gelu_fast", lambda: transformers.activations.ACT2FN["gelu_fast"]),
    ("gelu_accurate", lambda: transformers.activations.ACT2FN["gelu_accurate"]),
]
FORMS = [SigmoidGELU, FusedTanhGELU]


@pytest.mark.parametrize("form", FORMS, ids=[f.__name__ for f in FORMS])
@pytest.mark.parametrize(("name", "make"), TANH_GELUS, ids=[n for n, _ in TANH_GELUS])
def test_each_gelu_form_computes_each_tanh_gelu_to_float32_rounding(name, make, form):
    # given inputs from deep in the negative tail to large positive values, and +inf (-inf gives
    # NaN in the Python forms: -inf * 0)
    x = torch.cat([torch.linspace(-30, 30, 20001), torch.tensor([-1e30, 1e30, float("inf")])])
    # when the activation and our form run on them
    expected, got = make()(x), form()(x)
    # then they agree to float32 rounding everywhere, with no NaN
    assert not got.isnan().any()
    assert torch.allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_the_compiled_copy_uses_the_sigmoid_form_and_shares_every_weight(products_in_torch):
    # given a GPT-2 body (gelu_new in each MLP)
    body = gpt2().base_model
    # when it is copied for a compiled run
    clone = scoring_copy(body, compiled=True)
    # then each MLP's activation is the sigmoid form in the copy, and the model keeps its own
    assert [type(block.mlp.act) for block in clone.h] == [SigmoidGELU, SigmoidGELU]
    assert all(type(block.mlp.act).__name__ == "NewGELUActivation" for block in body.h)
    # and the copy holds the model's own parameter and buffer tensors, none copied
    assert {id(p) for p in clone.parameters()} == {id(p) for p in body.parameters()}
    assert {id(b) for b in clone.buffers()} == {id(b) for b in body.buffers()}


def test_the_eager_copy_calls_torchs_fused_kernel_for_python_gelus_only(products_in_torch):
    # given GPT-2 bodies with the Python tanh GELU, torch's fused one, and the erf GELU
    python, fused, erf = (gpt2(a).base_model for a in ("gelu_new", "gelu_pytorch_tanh", "gelu"))
    # when they are copied for an eager run
    copies = [scoring_copy(b, compiled=False) for b in (python, fused, erf)]
    # then only the Python form is replaced; the others already are what they should be
    assert [type(c.h[0].mlp.act).__name__ for c in copies] == ["FusedTanhGELU", "GELUTanh", "GELUActivation"]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager copy", "compiled copy"])
def test_a_scoring_copy_gives_the_bodys_hidden_states(compiled):
    # given a GPT-2 body and a batch of token ids
    torch.manual_seed(0)
    model = gpt2()
    ids = torch.randint(0, 50, (3, 12))
    # when the body and its scoring copy run on it (eagerly)
    with torch.inference_mode():
        expected = model.base_model(input_ids=ids).last_hidden_state
        got = scoring_copy(model.base_model, compiled=compiled)(input_ids=ids).last_hidden_state
    # then the hidden states agree to float32 rounding
    assert torch.allclose(got, expected, atol=1e-5)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_the_packed_body_cuts_the_last_mlp_to_the_kept_rows_only(compiled):
    # given a GPT-2 body, a batch of token ids and some flat positions to keep
    torch.manual_seed(0)
    model = gpt2()
    ids = torch.randint(0, 50, (3, 10))
    keep = torch.tensor([1, 5, 12, 29])
    body = packed_body(model.base_model, compiled=compiled)
    # when the packed body runs with and without them
    with torch.inference_mode():
        full = model.base_model(input_ids=ids).last_hidden_state.reshape(-1, 16)
        cut = body(input_ids=ids, keep=keep).last_hidden_state.reshape(-1, 16)
        uncut = body(input_ids=ids).last_hidden_state.reshape(-1, 16)
    # then only the last layer's MLP is wrapped, the kept rows are the model's, the others lack
    # the last MLP, and the rows are not left set after the call
    assert [type(block.mlp).__name__ for block in body.body.h] == ["GPT2MLP", "RowSubsetMLP"]
    assert torch.allclose(cut[keep], full[keep], atol=1e-5)
    others = torch.tensor([i for i in range(30) if i not in keep.tolist()])
    assert (cut[others] - full[others]).abs().max() > 1e-2
    assert torch.allclose(uncut, full, atol=1e-5)
    assert body.trimmed.rows is None


def test_concurrent_eager_calls_each_cut_their_own_rows():
    # given one eager packed body shared by two threads, each with its own batch and rows to keep
    from concurrent.futures import ThreadPoolExecutor

    torch.manual_seed(0)
    model = gpt2()
    body = packed_body(model.base_model, compiled=False)
    jobs = [(torch.randint(0, 50, (3, 10)), torch.tensor([1, 5, 12, 29])) for _ in range(2)]
    jobs.append((torch.randint(0, 50, (2, 7)), torch.tensor([0, 6, 13])))

    def run(job):
        ids, keep = job
        with torch.inference_mode():
            got = body(input_ids=ids, keep=keep).last_hidden_state.reshape(-1, 16)[keep]
            expected = model.base_model(input_ids=ids).last_hidden_state.reshape(-1, 16)[keep]
        return torch.allclose(got, expected, atol=1e-5)

    # when they run many times at once
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(run, jobs * 30))
    # then every call read its own rows
    assert all(results)


def test_a_last_layer_without_a_dense_mlp_runs_in_full():
    # given an OPT body (its layers name their products fc1 / fc2, no mlp module)
    body = opt().base_model
    # when its packed body is built
    packed = packed_body(body, compiled=False)
    # then nothing is cut
    assert isinstance(packed, PackedBody) and packed.trimmed is None
    assert not any(isinstance(m, RowSubsetMLP) for m in packed.modules())
