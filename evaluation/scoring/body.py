"""The body that the packed path runs: a copy of the model's modules that shares its weights, with
the tanh-approximated GELU computed in the fastest form for the way it runs, and a last layer whose
MLP runs only where an output is read.

GPT-2 and its kin compute the tanh GELU in Python (transformers' ``NewGELUActivation``: five
element-wise operations, each a pass over the MLP's widest activation). The function is the same
in every form below; only the speed differs (a [1900 x 2048] activation, 2-core Xeon, float32;
largest error against a float64 reference 4.8e-7 for each):

- eager: the five operations 8.9 ms, torch's fused ``gelu(approximate="tanh")`` kernel 3.1 ms.
  The eager packed path ran 11 % faster end to end with the fused kernel (400 questions of
  bench/scoring.py, A/B in one process).
- compiled: Inductor fuses the five operations into one loop (3.35 ms), but its vectorised tanh
  is slow and its exp fast, so ``x * sigmoid(2z)`` (the same function, as 1 + tanh(z) =
  2 sigmoid(2z)) took 1.27 ms; 7 % faster end to end.

On a CPU through oneDNN (cpu_linear.py), the GELU (tanh or erf) after an MLP's first product is
applied by that product as it writes its output (a oneDNN post-op), saving a pass over the widest
activation: [2048 x 512] by 512 x 2048 with its GELU, 23.2 ms apart and 21.0 ms fused (2-vCPU EPYC
Zen 4).

The last layer's outputs are read only at the positions that predict a candidate token (the
context's last token and the candidates' fed tokens); at the other context positions the layer
only has to supply keys and values to the candidates' attention. So the last layer's MLP (two
thirds of a layer's products) runs on those rows only (``RowSubsetMLP``); the other rows of the
last hidden state are left without it and are never read. With 46-token contexts among 105-token
packed rows that is 5 % of the body's products; the packed path ran 6 % faster (400 questions of
bench/scoring.py, compiled, A/B in one process). Only the MLPs of the usual dense decoder layers
(a module named ``mlp`` whose class name ends in "MLP": GPT-2, Llama, Mistral, Qwen, Gemma, Phi,
GPT-NeoX...) are cut this way: they act on each position alone. Mixture-of-experts blocks and
other layouts run in full.

The model itself, and so the naive path, the kv-cache path and the encoder-decoders, keep their
own modules.
"""

import copy
import logging
import math
import threading

import torch

from .cpu_linear import OneDnnLinear, onednn_replacement, packs_weights

logger = logging.getLogger(__name__)

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
# transformers' activations that compute the tanh approximation of GELU in Python operations
_PYTHON_TANH_GELUS = ("NewGELUActivation", "FastGELUActivation", "AccurateGELUActivation")
# ... and those that call torch's fused kernel (already the fastest eager form)
_FUSED_TANH_GELUS = ("GELUTanh", "PytorchGELUTanh")
# MLPs whose forward applies their activation to their first product alone: (product, activation)
_PRODUCT_THEN_ACTIVATION = {
    "GPT2MLP": ("c_fc", "act"),
    "GPTBigCodeMLP": ("c_fc", "act"),
    "GPTJMLP": ("fc_in", "act"),
    "CodeGenMLP": ("fc_in", "act"),
    "GPTNeoXMLP": ("dense_h_to_4h", "act"),
}


class SigmoidGELU(torch.nn.Module):
    """The tanh approximation of GELU, ``0.5 x (1 + tanh(z))`` with ``z = sqrt(2/pi) (x + 0.044715 x^3)``,
    computed as ``x * sigmoid(2z)``: the fastest form for Inductor's CPU code."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid((2.0 * _SQRT_2_OVER_PI) * (x + 0.044715 * (x * x * x)))


class FusedTanhGELU(torch.nn.Module):
    """The tanh approximation of GELU through torch's fused kernel: the fastest eager form."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate="tanh")


def _transformers_classes(names: tuple[str, ...]) -> tuple[type, ...]:
    try:
        from transformers import activations
    except ImportError:  # pragma: no cover - transformers is a dependency of the ml extra
        return ()
    return tuple(getattr(activations, n) for n in names if hasattr(activations, n))


def _replacement(
    module: torch.nn.Module,
    *,
    compiled: bool,
    packed: bool,
    python_forms: tuple[type, ...],
    fused_forms: tuple[type, ...],
) -> torch.nn.Module | None:
    """The module to put in place of ``module``, or None to keep it."""
    python_form = isinstance(module, python_forms)
    fused_form = isinstance(module, fused_forms) or (isinstance(module, torch.nn.GELU) and module.approximate == "tanh")
    if compiled and (python_form or fused_form):
        return SigmoidGELU()
    if not compiled and python_form:
        return FusedTanhGELU()
    return onednn_replacement(module, packed=packed)


def scoring_copy(module: torch.nn.Module, *, compiled: bool) -> torch.nn.Module:
    """A copy of ``module``'s module tree that shares its parameters and buffers (no weight is
    copied), with each tanh-approximated GELU in the fastest form for eager or compiled runs and, on a
    CPU, the linear layers' products through oneDNN (cpu_linear.py)."""
    shared = {id(t): t for t in (*module.parameters(), *module.buffers())}
    clone = copy.deepcopy(module, shared)
    forms = {
        "python_forms": _transformers_classes(_PYTHON_TANH_GELUS),
        "fused_forms": _transformers_classes(_FUSED_TANH_GELUS),
        "packed": packs_weights(clone),
    }
    # every replacement is chosen before any is made: a OneDnnLinear holds the layer it replaces
    replacements = [
        (parent, name, _replacement(child, compiled=compiled, **forms))
        for parent in clone.modules()
        for name, child in parent.named_children()
    ]
    for parent, name, replacement in replacements:
        if replacement is not None:
            setattr(parent, name, replacement)
    if compiled:  # packed before tracing, so that the graph holds the packed weights
        for layer in clone.modules():
            if isinstance(layer, OneDnnLinear) and layer.pack:
                layer.pack_weight()
    for module in clone.modules():
        fuse_activation(module)
    return clone


def fuse_activation(mlp: torch.nn.Module) -> bool:
    """In an MLP of ``_PRODUCT_THEN_ACTIVATION`` whose first product goes through oneDNN and whose
    activation is a GELU, let the product apply the GELU and drop the activation. The MLP is run on
    a probe input before and after: where the outputs differ (a model whose forward is not what
    the table says), it is put back as it was. Returns whether it was fused."""
    names = _PRODUCT_THEN_ACTIVATION.get(type(mlp).__name__)
    product, activation = (getattr(mlp, n, None) for n in names) if names else (None, None)
    kind = _gelu_kind(activation)
    if not isinstance(product, OneDnnLinear) or kind is None:
        return False
    probe = torch.randn(2, 3, product.in_features, generator=torch.Generator().manual_seed(0))
    unpacked = [m for m in mlp.modules() if isinstance(m, OneDnnLinear) and m.packed is None]
    with torch.no_grad():
        expected = mlp(probe)
        product.activation = kind
        setattr(mlp, names[1], torch.nn.Identity())
        got = mlp(probe)
    for layer in unpacked:  # what the probe packed: an eager copy that never runs holds no packed weight
        layer.packed = None
    if got.shape == expected.shape and torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
        return True
    product.activation = "none"
    setattr(mlp, names[1], activation)
    return False


def _gelu_kind(module: torch.nn.Module | None) -> str | None:
    """``module``'s GELU as a oneDNN post-op name (cpu_linear.ACTIVATIONS), or None for anything else."""
    name = type(module).__name__
    if isinstance(module, (FusedTanhGELU, SigmoidGELU)) or name in _PYTHON_TANH_GELUS + _FUSED_TANH_GELUS:
        return "gelu_tanh"
    if isinstance(module, torch.nn.GELU):
        return "gelu_tanh" if module.approximate == "tanh" else "gelu_erf"
    return "gelu_erf" if name == "GELUActivation" else None


class RowSubsetMLP(torch.nn.Module):
    """Runs the wrapped position-wise MLP only at ``rows`` (flat indices into batch x positions)
    when they are set for the current call; the other rows get zeros."""

    def __init__(self, mlp: torch.nn.Module) -> None:
        super().__init__()
        self.mlp = mlp
        self.rows: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = self.rows
        if rows is None:
            return self.mlp(x)
        flat = x.reshape(-1, x.shape[-1])
        # a 3-D input, as the decoder layer would give it
        picked = self.mlp(flat.index_select(0, rows)[None])[0]
        out = picked.new_zeros(flat.shape[0], picked.shape[-1]).index_copy_(0, rows, picked)
        return out.view(*x.shape[:-1], picked.shape[-1])


class PackedBody(torch.nn.Module):
    """A causal LM body for the packed path: ``keep`` (flat indices of the positions whose last
    hidden state will be read) is handed to the last layer's MLP for the call."""

    def __init__(self, body: torch.nn.Module, trimmed: RowSubsetMLP | None = None) -> None:
        super().__init__()
        self.body = body
        self.trimmed = trimmed
        self._lock = threading.Lock()

    def forward(self, keep: torch.Tensor | None = None, **inputs):
        if self.trimmed is None:
            return self.body(**inputs)
        if torch.compiler.is_compiling():
            # traced: the rows become an input of the graph and the writes are replayed after it
            return self._run(keep, inputs)
        with self._lock:  # eager: the rows live on the module during the call, one call at a time
            return self._run(keep, inputs)

    def _run(self, keep: torch.Tensor | None, inputs: dict):
        self.trimmed.rows = keep
        out = self.body(**inputs)
        self.trimmed.rows = None
        return out


def packed_body(module: torch.nn.Module, *, compiled: bool) -> PackedBody:
    """The packed path's body for ``module``: its scoring copy with the last layer's MLP cut to
    the rows read, or, when the module tree cannot be copied, the module itself, run in full."""
    try:
        clone = scoring_copy(module, compiled=compiled)
    except Exception as exc:  # noqa: BLE001 - a module tree that cannot be copied runs as it is
        logger.warning(
            "could not copy %s for scoring (%s); the packed path runs it as it is", type(module).__name__, exc
        )
        return PackedBody(module)
    layer = _last_layer(clone)
    mlp = getattr(layer, "mlp", None)
    if not isinstance(mlp, torch.nn.Module) or not type(mlp).__name__.endswith("MLP"):
        return PackedBody(clone)
    layer.mlp = RowSubsetMLP(mlp)
    return PackedBody(clone, layer.mlp)


def _last_layer(body: torch.nn.Module) -> torch.nn.Module | None:
    """The last decoder layer: the last entry of the body's list of ``num_hidden_layers`` layers."""
    n = getattr(getattr(body, "config", None), "num_hidden_layers", None)
    for child in body.children():
        if isinstance(child, torch.nn.ModuleList) and n and len(child) == n:
            return child[-1]
    return None
