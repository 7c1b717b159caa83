"""Where and in what precision a Hugging Face model runs: shared by every app that loads one
(evaluation's systems, the masked LM of negatives). The files are local by then: a folder, or the
Hugging Face cache's copy of a hub model (core.hub), loaded with ``local_files_only``."""

import os

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def resolve_device(device: str | None = None) -> str:
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_dtype(dtype: str, device: str):
    """auto: bfloat16 (float16 without bf16 support) on a GPU, float32 on a CPU. A CPU always gets float32."""
    import torch

    if not device.startswith("cuda"):
        return torch.float32
    if dtype == "auto":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]


def dtype_kwargs(torch_dtype) -> dict:
    """``from_pretrained``'s keyword for the weights' dtype: transformers 4.56 renamed
    ``torch_dtype`` to ``dtype`` (and deprecates the old name)."""
    import transformers

    major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
    return {"dtype" if (major, minor) >= (4, 56) else "torch_dtype": torch_dtype}
