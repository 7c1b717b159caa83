"""Matrix products of the scoring paths on a CPU through oneDNN instead of torch's default BLAS.

On an x86 CPU torch's ``F.linear`` and ``addmm`` call MKL's sgemm. MKL picks its code path by
CPU vendor: on an AMD EPYC it reports "Intel(R) Architecture processors" and runs a generic path,
while oneDNN (torch's ``mkldnn`` ops) chooses by instruction set and runs its AVX-512 or AVX2
kernels on either vendor. Measured on a 2-vCPU EPYC family 25 model 17 (Zen 4), float32, plain
(unpacked) weights: the body's shapes ([2048 x 512] by 512 x 512 / 1536 / 2048) 116-175 GFLOP/s
through MKL and 186-198 through oneDNN; the output head's ([256 x 512] by 512 x 8192) 70-130
against 174. It serves the output head on every path and the packed body, eager and compiled:
Inductor keeps GPT-2's ``Conv1D`` products (``addmm``) on MKL, so a compiled body calls the custom
op below instead (one graph, no break). End to end, bench/scoring.py went from 2.87x lm-eval's
speed (compiled, MKL) to 3.1-3.4x eager and compiled (medians of 3 on two VMs; bench/README.md).

Where it applies (``WELLCHOSEN_CPU_ONEDNN``): ``auto``, the default, only where the cause is, a
torch whose BLAS is MKL on a CPU whose vendor is not Intel's; on an Intel CPU MKL takes its own
tuned path, and the Xeon figures (3.05-3.28x) were measured with it. ``1`` on any CPU where the
op runs, ``0`` never.

``torch.ops.mkldnn._linear_pointwise`` takes the model's own weight as it lies ([out, in], or a
transposed view of GPT-2's [in, out] ``Conv1D`` weight), so no weight is copied. It is not a public
API: a probe checks it once against ``F.linear``, and where it is missing or differs the products
stay torch's default.
"""

import functools

import torch

from config.settings.env import env_bool, env_int, env_str

_PACK_ROWS = 2048  # the rows of input a packed weight's layout is chosen for (the CPU batch's tokens)


def onednn_setting() -> str:
    """``WELLCHOSEN_CPU_ONEDNN`` as "auto" (unset, empty or ``auto``), "on" or "off" (read as the
    settings' booleans are: ``env_bool``, whose error names the variable)."""
    if env_str("WELLCHOSEN_CPU_ONEDNN", "auto").strip().lower() in ("", "auto"):
        return "auto"
    return "on" if env_bool("WELLCHOSEN_CPU_ONEDNN", False) else "off"


def cpu_vendor() -> str:
    """The CPU's vendor string as the kernel reports it ("GenuineIntel", "AuthenticAMD"), or ""."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("vendor_id"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


def mkl_takes_a_generic_path() -> bool:
    """Whether torch's float32 products go to MKL on a CPU that MKL does not tune for (not Intel's)."""
    return torch.backends.mkl.is_available() and cpu_vendor() not in ("", "GenuineIntel")


@functools.cache
def onednn_linear_available() -> bool:
    """Whether the products go through oneDNN here: wanted (``onednn_setting``; ``auto`` where
    ``mkl_takes_a_generic_path``) and ``onednn_linear_runs``."""
    setting = onednn_setting()
    if setting == "off" or (setting == "auto" and not mkl_takes_a_generic_path()):
        return False
    return onednn_linear_runs()


@functools.cache
def onednn_linear_runs() -> bool:
    """Whether oneDNN's linear op runs here and agrees with ``F.linear`` on a small float32 product."""
    op = getattr(getattr(torch.ops, "mkldnn", None), "_linear_pointwise", None)
    if op is None or not torch.backends.mkldnn.is_available():
        return False
    generator = torch.Generator().manual_seed(0)
    x, w, b = (torch.randn(shape, generator=generator) for shape in ((3, 5, 16), (24, 16), (24,)))
    try:
        got = op(x, w, b, "none", [], "")
    except (RuntimeError, TypeError):
        return False
    return got.shape == (3, 5, 24) and torch.allclose(got, torch.nn.functional.linear(x, w, b), atol=1e-5)


def uses_onednn(weight: torch.Tensor) -> bool:
    """Whether a product with ``weight`` goes through oneDNN: a float32 weight on a CPU, where the op runs."""
    return weight.device.type == "cpu" and weight.dtype == torch.float32 and onednn_linear_available()


# an activation oneDNN applies to a product's output as it writes it: (its name, its algorithm)
ACTIVATIONS = {"none": ("none", ""), "gelu_tanh": ("gelu", "tanh"), "gelu_erf": ("gelu", "none")}


@torch.library.custom_op("wellchosen::onednn_linear", mutates_args=())
def onednn_linear(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, activation: str = "none"
) -> torch.Tensor:
    """``F.linear`` through oneDNN, followed by ``activation`` (``ACTIVATIONS``). An operator of its
    own, so that a compiled graph calls it as it is (Inductor would otherwise take a ``Conv1D``'s
    ``addmm`` to MKL). ``weight``: plain, or packed by ``_reorder_linear_weight``."""
    name, algorithm = ACTIVATIONS[activation]
    return torch.ops.mkldnn._linear_pointwise(x.contiguous(), weight, bias, name, [], algorithm)


@onednn_linear.register_fake
def _onednn_linear_shape(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, activation: str = "none"
) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear(x, weight, bias)``, through oneDNN where ``uses_onednn(weight)``."""
    if uses_onednn(weight):
        return onednn_linear(x, weight, bias)
    return torch.nn.functional.linear(x, weight, bias)


class OneDnnLinear(torch.nn.Module):
    """A linear layer of a scoring copy through oneDNN (``transposed``: GPT-2's ``Conv1D``, whose
    weight is [in, out]). Unpacked, it reads the weight from the module it replaces at each call,
    so the weight stays shared with the model. ``packed``: a copy of the weight in oneDNN's blocked
    layout, so that no call reorders it (for as much memory again as the weight), made by
    ``pack_weight``: an eager copy calls it on its first call (an unused copy costs nothing), a
    compiled one before it is traced (the packed weight is then a constant of the graph). About
    6 % faster eager scoring on a 2-vCPU EPYC Zen 4."""

    def __init__(self, source: torch.nn.Module, *, transposed: bool, packed: bool = False) -> None:
        super().__init__()
        self.source = source
        self.transposed = transposed
        self.pack = packed
        self.activation = "none"  # fuse_activation sets another where one follows the product
        self.packed: torch.Tensor | None = None

    @property
    def weight(self) -> torch.Tensor:  # code that reads a layer's weight (its dtype, say) finds the model's
        return self.source.weight

    @property
    def bias(self) -> torch.Tensor | None:
        return self.source.bias

    @property
    def in_features(self) -> int:
        return self._plain_weight().shape[1]

    def _plain_weight(self) -> torch.Tensor:
        return self.source.weight.t() if self.transposed else self.source.weight

    def pack_weight(self) -> None:
        self.packed = torch.ops.mkldnn._reorder_linear_weight(self._plain_weight().contiguous(), _PACK_ROWS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # no check here: onednn_replacement made the layer only where the op runs, and a check
        # would break a compiled graph
        if self.pack and self.packed is None:
            self.pack_weight()
        weight = self.packed if self.packed is not None else self._plain_weight()
        return onednn_linear(x, weight, self.source.bias, self.activation)


def onednn_replacement(module: torch.nn.Module, *, packed: bool = False) -> torch.nn.Module | None:
    """A ``OneDnnLinear`` for a float32 CPU ``nn.Linear`` or ``Conv1D``, or None to keep ``module``."""
    if not replaceable(module):
        return None
    return OneDnnLinear(module, transposed=type(module) is not torch.nn.Linear, packed=packed)


def replaceable(module: torch.nn.Module) -> bool:
    """Whether ``module`` is a float32 CPU ``nn.Linear`` or transformers ``Conv1D`` that oneDNN runs here."""
    weight = getattr(module, "weight", None)
    if not isinstance(weight, torch.Tensor) or not uses_onednn(weight):
        return False
    conv1d = type(module).__name__ == "Conv1D" and type(module).__module__.startswith("transformers")
    return type(module) is torch.nn.Linear or conv1d


def packs_weights(module: torch.nn.Module) -> bool:
    """Whether a scoring copy of ``module`` keeps packed copies of its linear weights: when they
    take at most ``WELLCHOSEN_CPU_ONEDNN_PACK_MAX_MB`` (default 1024; 0: never), the memory they
    cost again."""
    limit = env_int("WELLCHOSEN_CPU_ONEDNN_PACK_MAX_MB", 1024) * 2**20
    size = sum(m.weight.numel() * m.weight.element_size() for m in module.modules() if replaceable(m))
    return 0 < size <= limit
