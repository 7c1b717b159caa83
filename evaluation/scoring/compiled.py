"""An optional torch.compile'd copy of a causal LM's body, for the packed scoring path.

Inductor fuses the body's element-wise work (GELU, layer norms, residual adds, the attention
mask), and ``freezing`` folds the weights into the graph as constants (their layout changes are
done once, not per batch). The matrix products stay the same library calls: measured, the packed
path ran 10-20 % faster on a 2-core CPU and 1.7x faster on an H100 in bf16 (bench/scoring.py;
README). The price is a compilation on the first batches (23-37 s on that CPU, 153 s for a 1.27 B
model on the H100; once per worker, which keeps the scorer) and about one more copy of the
weights. Shapes are dynamic, so new batch widths do not recompile (a one-question batch compiles
once more). Compilation needs a C++ compiler on a CPU and Triton on a GPU; when it fails for any
reason the body falls back to eager mode for good, with a warning, and the numbers do not change.

What is compiled is a copy of the body's modules that shares its weights (``scoring_copy``), in
which the tanh-approximated GELUs are written as ``x * sigmoid(2z)``: the same function, but
Inductor's CPU code has a fast vectorised exp and a slow, accurate tanh. On a [1900 x 2048]
activation (a batch of GPT-2's MLP) the sigmoid form took 1.27 ms against 3.35 ms, with the same
largest error against a float64 reference (4.8e-7); a GPT-2-shaped body scored 7 % faster end to
end (bench/scoring.py, A/B in one process). The model itself, and so the eager and naive paths,
keep their own activation modules.
"""

import copy
import logging
import math

import torch

logger = logging.getLogger(__name__)

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


class SigmoidGELU(torch.nn.Module):
    """The tanh approximation of GELU, ``0.5 x (1 + tanh(z))`` with ``z = sqrt(2/pi) (x + 0.044715 x^3)``,
    computed as ``x * sigmoid(2z)`` (the same function, since 1 + tanh(z) = 2 sigmoid(2z))."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid((2.0 * _SQRT_2_OVER_PI) * (x + 0.044715 * (x * x * x)))


def _is_tanh_gelu(module: torch.nn.Module) -> bool:
    """Activation modules that compute the tanh approximation of GELU (torch's and transformers')."""
    if isinstance(module, torch.nn.GELU):
        return module.approximate == "tanh"
    try:
        from transformers import activations
    except ImportError:  # pragma: no cover - transformers is a dependency of the ml extra
        return False
    names = ("NewGELUActivation", "GELUTanh", "PytorchGELUTanh", "FastGELUActivation", "AccurateGELUActivation")
    return isinstance(module, tuple(getattr(activations, n) for n in names if hasattr(activations, n)))


def scoring_copy(module: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``module``'s module tree that shares its parameters and buffers (no weight is
    copied), with every tanh-approximated GELU replaced by ``SigmoidGELU``."""
    shared = {id(t): t for t in (*module.parameters(), *module.buffers())}
    clone = copy.deepcopy(module, shared)
    for parent in clone.modules():
        for name, child in list(parent.named_children()):
            if _is_tanh_gelu(child):
                setattr(parent, name, SigmoidGELU())
    return clone


class CompiledBody:
    """Calls a compiled copy of ``module``; on the first failure, the module itself from then on."""

    def __init__(self, module: torch.nn.Module, *, name: str = "") -> None:
        self.module = module
        self.name = name or type(module).__name__
        try:
            target = scoring_copy(module)
        except Exception as exc:  # noqa: BLE001 - a module tree that cannot be copied is compiled as it is
            logger.warning("could not copy %s for scoring (%s); compiling it as it is", self.name, exc)
            target = module
        # freezing: weights become constants of the graph (scoring never changes them)
        self.compiled = torch.compile(target, dynamic=True, options={"freezing": True})
        self.failed: str = ""

    def __call__(self, **inputs):
        if not self.failed:
            try:
                return self.compiled(**inputs)
            except Exception as exc:  # noqa: BLE001 - any compiler failure falls back to eager
                self.failed = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
                logger.warning("torch.compile failed for %s; scoring in eager mode (%s)", self.name, self.failed)
        return self.module(**inputs)
