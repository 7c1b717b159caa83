"""The body that the packed path runs: a copy of the model's modules that shares its weights, with
the tanh-approximated GELU computed in the fastest form for the way it runs.

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

The model itself, and so the naive path, the kv-cache path and the encoder-decoders, keep their
own activation modules.
"""

import copy
import math

import torch

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
# transformers' activations that compute the tanh approximation of GELU in Python operations
_PYTHON_TANH_GELUS = ("NewGELUActivation", "FastGELUActivation", "AccurateGELUActivation")
# ... and those that call torch's fused kernel (already the fastest eager form)
_FUSED_TANH_GELUS = ("GELUTanh", "PytorchGELUTanh")


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


def _replacement(module: torch.nn.Module, *, compiled: bool) -> torch.nn.Module | None:
    """The module to put in place of ``module``, or None to keep it."""
    python_form = isinstance(module, _transformers_classes(_PYTHON_TANH_GELUS))
    fused_form = isinstance(module, _transformers_classes(_FUSED_TANH_GELUS)) or (
        isinstance(module, torch.nn.GELU) and module.approximate == "tanh"
    )
    if compiled and (python_form or fused_form):
        return SigmoidGELU()
    if not compiled and python_form:
        return FusedTanhGELU()
    return None


def scoring_copy(module: torch.nn.Module, *, compiled: bool) -> torch.nn.Module:
    """A copy of ``module``'s module tree that shares its parameters and buffers (no weight is
    copied), with each tanh-approximated GELU in the fastest form for eager or compiled runs."""
    shared = {id(t): t for t in (*module.parameters(), *module.buffers())}
    clone = copy.deepcopy(module, shared)
    for parent in clone.modules():
        for name, child in list(parent.named_children()):
            replacement = _replacement(child, compiled=compiled)
            if replacement is not None:
                setattr(parent, name, replacement)
    return clone
