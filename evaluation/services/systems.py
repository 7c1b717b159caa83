"""Registering systems: checkpoints from a local directory or a Hugging Face model id, or plugin classes."""

from django.core.exceptions import ValidationError

from core.errors import UserError
from core.names import slug_check
from evaluation.models import System, SystemDtype
from evaluation.scoring.backends import backend_for, backend_named
from evaluation.scoring.sources import SystemSources


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
    """What a system of ``kind`` runs, checked by its backend (register_system and the admin's system
    form): the plugin imports, or the checkpoint and tokenizer resolve (a hub id is fetched into the
    Hugging Face cache). ``checkpoint_revision`` and ``tokenizer_revision``, when given, pin a hub id
    to the commit recorded before instead of resolving its branch again. An external system runs nothing."""
    backend = backend_named(kind)
    if dtype not in SystemDtype.values:
        raise UserError(f"dtype must be one of {', '.join(SystemDtype.values)}, not {dtype!r}")
    backend.options_check(compile_model=compile_model, chat_template=chat_template)
    return backend.sources(
        checkpoint=checkpoint,
        tokenizer_path=tokenizer_path,
        plugin=plugin,
        chat_template=chat_template,
        checkpoint_revision=checkpoint_revision,
        tokenizer_revision=tokenizer_revision,
    )


def system_toy_model_record(*, system: System) -> None:
    """Record whether the system's checkpoint is a toy model, from its folder's marker (unsaved)."""
    system.toy_model = backend_for(system).toy_model(system)
