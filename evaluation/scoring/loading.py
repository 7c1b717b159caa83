"""Systems -> scorers. A worker process loads each system's model once and keeps it."""

import logging
import threading

from core.hub import model_resolve
from core.model_loading import dtype_kwargs, resolve_device, resolve_dtype

from .base import ContextTemplate
from .chat import ChatTemplate
from .plugin import PluginScorer

logger = logging.getLogger(__name__)
_cache: dict[tuple, object] = {}
_lock = threading.Lock()


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
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    model_files = model_resolve(name=checkpoint, setting="checkpoint", revision=checkpoint_revision or None)
    tokenizer_files = (
        model_resolve(name=tokenizer_path, setting="tokenizer", revision=tokenizer_revision or None, weights=False)
        if tokenizer_path
        else model_files
    )
    device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, device)
    auto = AutoModelForCausalLM if kind == "causal" else AutoModelForSeq2SeqLM
    model = auto.from_pretrained(model_files.path, **model_files.load_kwargs(), **dtype_kwargs(torch_dtype))
    model = model.to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_files.path, local_files_only=True)
    return model, tokenizer


def scorer_for(system, *, device: str | None = None):
    """The scorer of a System, cached per process by (system id, updated_at): an edited system reloads."""
    key = (system.pk, system.updated_at, device)
    with _lock:
        scorer = _cache.get(key)
        if scorer is None:
            for stale in [k for k in _cache if k[0] == system.pk]:
                del _cache[stale]
            scorer = _build(system, device=device)
            _cache[key] = scorer
            logger.info("loaded system %s", system.name)
        return scorer


def scorer_cache_clear() -> None:
    with _lock:
        _cache.clear()


def template_for(system, tokenizer):
    """The system's context template: the tokenizer's chat template (a UserError when the tokenizer has
    none) or the plain one."""
    if system.chat_template:
        return ChatTemplate(tokenizer)
    return ContextTemplate(separator=system.turn_separator, speaker_tags=system.speaker_tags)


def _build(system, *, device: str | None):
    if system.kind == "plugin":
        return PluginScorer.from_path(system.plugin, system=system)
    from .lm import LMScorer

    model, tokenizer = load_model(
        kind=system.kind,
        checkpoint=system.checkpoint,
        tokenizer_path=system.tokenizer_path,
        checkpoint_revision=system.checkpoint_revision,
        tokenizer_revision=system.tokenizer_revision,
        dtype=system.dtype,
        device=device,
    )
    return LMScorer(
        model=model,
        tokenizer=tokenizer,
        kind=system.kind,
        template=template_for(system, tokenizer),
        max_context_tokens=system.max_context_tokens,
        max_candidate_tokens=system.max_candidate_tokens,
        eos_after_candidate=system.eos_after_candidate,
        # On a GPU, 16 k tokens per batch: larger batches pad more (rows are cut from a list
        # sorted by length) and gain nothing in the products; 1.27 B model on an H100, compiled:
        # 56 % of the bf16 peak at 16 k (11 % padding), 50 % at 32 k (21 %), 43 % at 64 k (32 %).
        batch_tokens=16384 if model.device.type == "cuda" else 2048,
        compile_model=system.compile_model,
    )
