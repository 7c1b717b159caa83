"""On a CPU the packed path's products (its body's linear layers and the output head) go through
oneDNN where WELLCHOSEN_CPU_ONEDNN wants it (auto: MKL on a CPU not Intel's) and the op runs
(cpu_linear.py). The tests of the replacement itself set it to 1, so that they run on any CPU."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from evaluation.scoring import cpu_linear  # noqa: E402
from evaluation.scoring.body import scoring_copy  # noqa: E402
from evaluation.scoring.compiled import CompiledBody  # noqa: E402
from evaluation.scoring.cpu_linear import OneDnnLinear, onednn_linear, onednn_linear_available, onednn_linear_runs  # noqa: E402
from evaluation.scoring.packed import head_logits  # noqa: E402
from tests.evaluation.scoring_models import gpt2, llama  # noqa: E402

needs_onednn = pytest.mark.skipif(not onednn_linear_runs(), reason="torch's oneDNN linear op does not run here")


def with_setting(monkeypatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv("WELLCHOSEN_CPU_ONEDNN", raising=False)
    else:
        monkeypatch.setenv("WELLCHOSEN_CPU_ONEDNN", value)
    onednn_linear_available.cache_clear()


@pytest.fixture(autouse=True)
def onednn_on(monkeypatch):
    with_setting(monkeypatch, "1")
    yield
    monkeypatch.undo()
    onednn_linear_available.cache_clear()


@pytest.fixture
def onednn_off(monkeypatch):
    with_setting(monkeypatch, "0")


def is_linear(module) -> bool:
    return type(module) is torch.nn.Linear or type(module).__name__ == "Conv1D"


@needs_onednn
@pytest.mark.parametrize("bias", [True, False])
def test_the_onednn_product_equals_f_linear_to_float32_rounding(bias):
    # given a 3-D input and a weight that is a transposed view, as GPT-2's Conv1D weight gives it
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(3, 7, 64, generator=generator)
    weight = torch.randn(64, 96, generator=generator).t()
    b = torch.randn(96, generator=generator) if bias else None
    # when it goes through oneDNN
    got = onednn_linear(x, weight, b)
    # then it is F.linear's product, to float32 rounding, in F.linear's shape
    expected = torch.nn.functional.linear(x, weight, b)
    assert got.shape == expected.shape == (3, 7, 96)
    assert torch.allclose(got, expected, rtol=1e-5, atol=1e-5)


@needs_onednn
@pytest.mark.parametrize("make", [gpt2, llama], ids=["gpt2 (Conv1D)", "llama (nn.Linear)"])
def test_the_scoring_copy_runs_every_linear_layer_through_onednn_on_the_models_own_weights(make):
    # given a model's body on the CPU in float32
    body = make().base_model
    # when it is copied for scoring
    clone = scoring_copy(body, compiled=False)
    # then every linear layer of the copy is called through a OneDnnLinear that reads its weight,
    # and no parameter was copied
    replaced = [m for m in clone.modules() if isinstance(m, OneDnnLinear)]
    linears = [m for m in clone.modules() if is_linear(m)]
    assert len(replaced) == len([m for m in body.modules() if is_linear(m)]) > 0
    assert {id(m) for m in linears} == {id(r.source) for r in replaced}
    assert {id(p) for p in clone.parameters()} == {id(p) for p in body.parameters()}
    # and it gives the body's hidden states
    ids = torch.randint(0, 50, (2, 9), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        expected = body(input_ids=ids).last_hidden_state
        got = clone(input_ids=ids).last_hidden_state
    assert torch.allclose(got, expected, rtol=1e-4, atol=1e-5)


@needs_onednn
def test_an_eager_copy_packs_its_weights_on_its_first_call_and_a_compiled_copy_before_tracing():
    # given a small model's body
    body = gpt2().base_model
    # when it is copied for eager and for compiled runs
    eager, compiled = scoring_copy(body, compiled=False), scoring_copy(body, compiled=True)
    # then each eager layer packs its weight once it runs, not before (the MLPs' probe included)
    layers = [m for m in eager.modules() if isinstance(m, OneDnnLinear)]
    assert layers and all(m.pack and m.packed is None for m in layers)
    with torch.no_grad():
        eager(input_ids=torch.tensor([[1, 2, 3]]))
    assert all(m.packed is not None for m in eager.modules() if isinstance(m, OneDnnLinear))
    # and each compiled layer holds its packed weight already, before anything is traced
    layers = [m for m in compiled.modules() if isinstance(m, OneDnnLinear)]
    assert layers and all(m.packed is not None for m in layers)


@needs_onednn
def test_no_weight_is_packed_above_the_memory_limit(monkeypatch):
    # given a limit of 0 MB for packed weights
    monkeypatch.setenv("WELLCHOSEN_CPU_ONEDNN_PACK_MAX_MB", "0")
    # when a body is copied for eager and for compiled runs
    for compiled in (False, True):
        clone = scoring_copy(gpt2().base_model, compiled=compiled)
        # then its layers go through oneDNN on the model's own weights
        layers = [m for m in clone.modules() if isinstance(m, OneDnnLinear)]
        assert layers and not any(m.pack or m.packed is not None for m in layers)


def test_with_onednn_off_the_copy_keeps_torchs_layers(onednn_off):
    # given WELLCHOSEN_CPU_ONEDNN=0
    # when a body is copied for scoring
    clone = scoring_copy(gpt2().base_model, compiled=False)
    # then its layers are the model's own kinds
    assert not [m for m in clone.modules() if isinstance(m, OneDnnLinear)]


def test_a_float64_model_keeps_torchs_layers():
    # given a body in float64, which the oneDNN op does not take
    body = gpt2().double().base_model
    # when it is copied for scoring
    clone = scoring_copy(body, compiled=False)
    # then nothing was replaced
    assert not [m for m in clone.modules() if isinstance(m, OneDnnLinear)]


@needs_onednn
def test_the_compiled_copy_calls_onednn_without_a_graph_break():
    from torch._dynamo.utils import counters

    # given a compiled packed body of a GPT-2
    torch._dynamo.reset()
    counters.clear()
    model = gpt2()
    body = CompiledBody(model.base_model)
    ids = torch.randint(0, 50, (2, 9), generator=torch.Generator().manual_seed(3))
    # when it runs
    with torch.no_grad():
        got = body(input_ids=ids, use_cache=False).last_hidden_state
        expected = model.base_model(input_ids=ids).last_hidden_state
    # then it compiled (no fallback), into one graph, and gives the body's hidden states
    assert not body.failed
    assert not counters["graph_break"]
    assert torch.allclose(got, expected, rtol=1e-4, atol=1e-5)


@needs_onednn
def test_the_head_logits_are_the_heads_own(monkeypatch):
    # given a model's output head and some hidden states
    head = gpt2().get_output_embeddings()
    hidden = torch.randn(5, 16, generator=torch.Generator().manual_seed(4))
    calls = []
    monkeypatch.setattr(cpu_linear, "onednn_linear", lambda *a: calls.append(a) or torch.nn.functional.linear(*a))
    # when the fast path computes the logits
    with torch.no_grad():
        got = head_logits(head, hidden)
    # then it went through the oneDNN op, with the head's weight, and gave the head's logits
    assert len(calls) == 1 and calls[0][1] is head.weight
    assert torch.allclose(got, head(hidden), rtol=1e-5, atol=1e-5)


@needs_onednn
@pytest.mark.parametrize(
    ("vendor", "mkl", "expected"),
    [
        ("AuthenticAMD", True, True),
        ("HygonGenuine", True, True),
        ("GenuineIntel", True, False),
        ("AuthenticAMD", False, False),
        ("", True, False),
    ],
)
def test_auto_uses_onednn_only_where_mkl_takes_its_generic_path(monkeypatch, vendor, mkl, expected):
    # given the default setting, a CPU vendor and a torch with or without MKL
    with_setting(monkeypatch, None)
    monkeypatch.setattr(cpu_linear, "cpu_vendor", lambda: vendor)
    monkeypatch.setattr(torch.backends.mkl, "is_available", lambda: mkl)
    # when the scoring asks whether its products go through oneDNN
    # then they do only on a known vendor other than Intel, with MKL as torch's BLAS
    assert onednn_linear_available() is expected


def test_an_unknown_setting_is_an_error_naming_the_variable(monkeypatch):
    # given a value that is neither auto, 1 nor 0
    with_setting(monkeypatch, "fast")
    # when the scoring reads it
    # then the error names the variable and its value
    with pytest.raises(ValueError, match=r"WELLCHOSEN_CPU_ONEDNN='fast'"):
        onednn_linear_available()


def test_the_vendor_is_read_from_the_kernels_cpu_list():
    # given this machine's /proc/cpuinfo, where it lists a vendor (x86 Linux)
    try:
        listed = open("/proc/cpuinfo", encoding="ascii", errors="replace").read()
    except OSError:
        listed = ""
    if "vendor_id" not in listed:
        pytest.skip("no vendor_id in /proc/cpuinfo here")
    # when the vendor is read
    # then it is the one the kernel lists
    assert cpu_linear.cpu_vendor() and f"vendor_id\t: {cpu_linear.cpu_vendor()}" in listed


@needs_onednn
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize(
    ("function", "kind"), [("gelu_new", "gelu_tanh"), ("gelu_pytorch_tanh", "gelu_tanh"), ("gelu", "gelu_erf")]
)
def test_the_mlps_gelu_is_applied_by_its_first_product(compiled, function, kind):
    # given a GPT-2 body, whose MLPs apply a GELU to their first product
    body = gpt2(function).base_model
    # when it is copied for scoring
    clone = scoring_copy(body, compiled=compiled)
    # then each MLP's first product applies the GELU, its activation is gone, and the copy gives
    # the body's hidden states
    mlps = [m for m in clone.modules() if type(m).__name__ == "GPT2MLP"]
    assert mlps and all(m.c_fc.activation == kind and isinstance(m.act, torch.nn.Identity) for m in mlps)
    assert all(m.c_proj.activation == "none" for m in mlps)
    ids = torch.randint(0, 50, (2, 9), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        assert torch.allclose(
            clone(input_ids=ids).last_hidden_state, body(input_ids=ids).last_hidden_state, rtol=1e-4, atol=1e-5
        )


@needs_onednn
def test_an_mlp_whose_forward_is_not_the_tables_stays_unfused(monkeypatch):
    from transformers.models.gpt2 import modeling_gpt2

    # given a GPT-2 whose MLP adds a constant between its first product and the activation
    def forward(self, hidden_states):
        return self.c_proj(self.act(self.c_fc(hidden_states) + 1.0))

    monkeypatch.setattr(modeling_gpt2.GPT2MLP, "forward", forward)
    body = gpt2().base_model
    # when it is copied for scoring
    clone = scoring_copy(body, compiled=False)
    # then the probe found the fused MLP different and put the activation back
    mlps = [m for m in clone.modules() if type(m).__name__ == "GPT2MLP"]
    assert mlps and all(m.c_fc.activation == "none" and not isinstance(m.act, torch.nn.Identity) for m in mlps)
    ids = torch.randint(0, 50, (2, 9), generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        assert torch.allclose(
            clone(input_ids=ids).last_hidden_state, body(input_ids=ids).last_hidden_state, rtol=1e-4, atol=1e-5
        )
