"""A checkpoint's model and tokenizer, and a system's context template: what the language-model
backend (backends.py) builds its scorer from."""

from core.hub import model_resolve
from core.model_loading import dtype_kwargs, resolve_device, resolve_dtype

from .base import ContextTemplate
from .chat import ChatTemplate


def load_model(
    *,
    kind: str,
    checkpoint: str,
    tokenizer_path: str = "",
    checkpoint_revision: str = "",
    tokenizer_revision: str = "",
    dtype: str = "auto",
    device: str | None = None,
):
    """(model, tokenizer) from local directories or Hugging Face ids (core.hub), a hub id at the
    commit recorded for it; transformers itself never downloads."""
    from transformers import AutoTokenizer

    from .lm_kinds import lm_kind  # torch: imported where a model loads, never by the admin or the URLs

    model_files = model_resolve(name=checkpoint, setting="checkpoint", revision=checkpoint_revision or None)
    tokenizer_files = (
        model_resolve(name=tokenizer_path, setting="tokenizer", revision=tokenizer_revision or None, weights=False)
        if tokenizer_path
        else model_files
    )
    device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, device)
    model = (
        lm_kind(kind)
        .model_class()
        .from_pretrained(model_files.path, **model_files.load_kwargs(), **dtype_kwargs(torch_dtype))
    )
    model = model.to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_files.path, local_files_only=True)
    return model, tokenizer


def template_for(system, tokenizer):
    """The system's context template: the tokenizer's chat template (a UserError when the tokenizer has
    none) or the plain one."""
    if system.chat_template:
        return ChatTemplate(tokenizer)
    return ContextTemplate(separator=system.turn_separator, speaker_tags=system.speaker_tags)
