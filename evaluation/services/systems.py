"""Registering systems: checkpoints from a local directory or a Hugging Face model id, or plugin classes."""

from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ValidationError
from django.utils.module_loading import import_string

from core.errors import UserError
from core.hub import ResolvedModel, model_resolve
from core.names import slug_check
from core.toy_models import folder_is_toy
from evaluation.models import System, SystemDtype, SystemKind


@dataclass(frozen=True)
class SystemSources:
    """Where a system's model comes from, as stored: a local directory (absolute) or the hub id as
    given, with the commit it resolved to; or a plugin's dotted path."""

    checkpoint: str = ""
    checkpoint_revision: str = ""
    tokenizer_path: str = ""
    tokenizer_revision: str = ""
    plugin: str = ""


def system_register(
    *,
    name: str,
    kind: str,
    checkpoint: str = "",
    tokenizer_path: str = "",
    plugin: str = "",
    dtype: str = SystemDtype.AUTO,
    max_context_tokens: int = 512,
    max_candidate_tokens: int = 128,
    turn_separator: str = "\n",
    speaker_tags: bool = False,
    eos_after_candidate: bool = False,
    compile_model: bool = False,
    chat_template: bool = False,
    description: str = "",
) -> System:
    """Create or update the system ``name``. A checkpoint or tokenizer is a local directory with a
    model config, or a Hugging Face model id resolved (and fetched) now: its commit is recorded."""
    slug_check(name=name, what="system")
    sources = system_sources_check(
        kind=kind,
        checkpoint=checkpoint,
        tokenizer_path=tokenizer_path,
        plugin=plugin,
        dtype=dtype,
        compile_model=compile_model,
        chat_template=chat_template,
    )
    values = {
        "kind": kind,
        "checkpoint": sources.checkpoint,
        "checkpoint_revision": sources.checkpoint_revision,
        "tokenizer_path": sources.tokenizer_path,
        "tokenizer_revision": sources.tokenizer_revision,
        "plugin": sources.plugin,
        "dtype": dtype,
        "max_context_tokens": max_context_tokens,
        "max_candidate_tokens": max_candidate_tokens,
        "turn_separator": turn_separator,
        "speaker_tags": speaker_tags,
        "eos_after_candidate": eos_after_candidate,
        "compile_model": compile_model,
        "chat_template": chat_template,
        "description": description,
    }
    system = System.objects.filter(name=name).first() or System(name=name)
    for field, value in values.items():
        setattr(system, field, value)
    system_toy_model_record(system=system)
    try:
        system.full_clean()
    except ValidationError as exc:
        raise UserError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
    system.save()
    return system


def system_sources_check(
    *,
    kind: str,
    checkpoint: str = "",
    tokenizer_path: str = "",
    plugin: str = "",
    dtype: str = SystemDtype.AUTO,
    compile_model: bool = False,
    chat_template: bool = False,
    checkpoint_revision: str = "",
    tokenizer_revision: str = "",
) -> SystemSources:
    """What a system of ``kind`` runs, checked (register_system and the admin's system form): the
    plugin imports, or the checkpoint and tokenizer resolve (a hub id is fetched into the Hugging Face
    cache). ``checkpoint_revision`` and ``tokenizer_revision``, when given, pin a hub id to the commit
    recorded before instead of resolving its branch again. An external system runs nothing."""
    if kind not in SystemKind.values:
        raise UserError(f"kind must be one of {', '.join(SystemKind.values)}, not {kind!r}")
    if dtype not in SystemDtype.values:
        raise UserError(f"dtype must be one of {', '.join(SystemDtype.values)}, not {dtype!r}")
    if compile_model and kind != SystemKind.CAUSAL:
        raise UserError(f"compiling applies to causal systems (their packed scoring path), not to a {kind} system")
    if chat_template and kind != SystemKind.CAUSAL:
        raise UserError(f"a chat template applies to causal systems, not to a {kind} system")
    if kind == SystemKind.EXTERNAL:
        return SystemSources(checkpoint=checkpoint, tokenizer_path=tokenizer_path)
    if kind == SystemKind.PLUGIN:
        if not plugin:
            raise UserError("a plugin system needs --plugin (dotted path of a class with losses())")
        try:
            plugin_class = import_string(plugin)
        except ImportError as exc:
            raise UserError(f"cannot import plugin {plugin!r}: {exc}") from None
        if not callable(getattr(plugin_class, "losses", None)):
            raise UserError(f"plugin {plugin!r} has no losses(contexts, candidates) method")
        return SystemSources(checkpoint=checkpoint.strip(), plugin=plugin)  # what the plugin reads, if anything
    if not checkpoint.strip():
        raise UserError(f"a {kind} system needs --checkpoint (a local model directory or a Hugging Face model id)")
    model = _resolved(checkpoint, "checkpoint", "config.json", revision=checkpoint_revision, weights=True)
    tokenizer = (
        _resolved(tokenizer_path, "tokenizer", "tokenizer_config.json", revision=tokenizer_revision, weights=False)
        if tokenizer_path.strip()
        else None
    )
    if tokenizer is None and not (Path(model.path) / "tokenizer_config.json").is_file():
        raise UserError(f"checkpoint {checkpoint.strip()} has no tokenizer; give --tokenizer")
    if chat_template:
        _chat_template_check((tokenizer or model).path)
    return SystemSources(
        checkpoint=_stored(checkpoint, model),
        checkpoint_revision=model.revision_sha,
        tokenizer_path=_stored(tokenizer_path, tokenizer) if tokenizer else "",
        tokenizer_revision=tokenizer.revision_sha if tokenizer else "",
    )


def _resolved(name: str, what: str, marker: str, *, revision: str, weights: bool) -> ResolvedModel:
    """The model ``name`` resolved, with its ``marker`` file (a model config, a tokenizer config)."""
    model = model_resolve(name=name, setting=what, revision=revision or None, weights=weights)
    if not (Path(model.path) / marker).is_file():
        raise UserError(f"{what} {name.strip()} ({model.path}) has no {marker}")
    return model


def _stored(name: str, model: ResolvedModel) -> str:
    """A hub id as given (its commit is stored beside it), a local directory as an absolute path."""
    return name.strip() if model.from_hub else model.path


def system_toy_model_record(*, system: System) -> None:
    """Record whether the system's checkpoint is a toy model, from its folder's marker (unsaved)."""
    system.toy_model = folder_is_toy(system.checkpoint) if system.kind != SystemKind.PLUGIN else False


def _chat_template_check(tokenizer_dir: str) -> None:
    """A UserError unless the tokenizer in ``tokenizer_dir`` carries a chat template that renders our contexts."""
    from transformers import AutoTokenizer

    from evaluation.scoring.chat import chat_template_check

    try:
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot load the tokenizer in {tokenizer_dir}: {exc}") from None
    chat_template_check(tokenizer, where=tokenizer_dir)
