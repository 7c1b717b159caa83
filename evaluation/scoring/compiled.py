"""An optional torch.compile'd copy of a causal LM's body, for the packed scoring path.

Inductor fuses the body's element-wise work (GELU, layer norms, residual adds, the attention
mask), and ``freezing`` folds the weights into the graph as constants (their layout changes are
done once, not per batch). The matrix products stay library calls (where cpu_linear.py sends a
CPU's products to oneDNN, its custom op on weights packed before tracing, as in the eager copy):
measured, the packed path ran 10-20 % faster than eager on a 2-core Xeon (MKL), about as fast as
eager on a 2-vCPU EPYC Zen 4 (oneDNN: 3.12x against 3.11x lm-eval's speed), and 1.7x
faster on an H100 in bf16 (bench/scoring.py; README). The price is a compilation on the first
batches (16-37 s on a 2-core CPU, 153 s for a 1.27 B model on the H100; once per worker, which
keeps the scorer). Shapes are dynamic, so new
batch widths do not recompile (a one-question batch compiles once more). Compilation needs a C++
compiler on a CPU and Triton on a GPU; when it fails for any reason the body falls back to eager
mode for good, with a warning, and the numbers do not change.

What is compiled is the body's packed copy (body.py: shared weights, the tanh GELU written as
``x * sigmoid(2z)``, which Inductor computes 2.6x faster than its tanh, or, through oneDNN, applied
by the MLP's first product, and the last layer's MLP only where an output is read).
"""

import logging

import torch

from .body import packed_body

logger = logging.getLogger(__name__)


class CompiledBody:
    """Calls a compiled packed body of ``module`` (body.py); on the first failure, the eager
    packed body from then on."""

    def __init__(self, module: torch.nn.Module, *, name: str = "") -> None:
        self.name = name or type(module).__name__
        self.module = packed_body(module, compiled=False)
        # freezing: weights become constants of the graph (scoring never changes them)
        self.compiled = torch.compile(packed_body(module, compiled=True), dynamic=True, options={"freezing": True})
        self.failed: str = ""

    def __call__(self, **inputs):
        if not self.failed:
            try:
                return self.compiled(**inputs)
            except Exception as exc:  # noqa: BLE001 - any compiler failure falls back to eager
                self.failed = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
                logger.warning("torch.compile failed for %s; scoring in eager mode (%s)", self.name, self.failed)
        return self.module(**inputs)
