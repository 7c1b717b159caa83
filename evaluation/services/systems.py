"""Registering systems: local checkpoints (never downloaded) or plugin classes."""

from pathlib import Path

from django.core.exceptions import ValidationError
from django.utils.module_loading import import_string

from core.errors import UserError
from core.names import slug_check
from core.toy_models import folder_is_toy
from evaluation.models import System, SystemDtype, SystemKind


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
    """Create or update the system ``name``. Paths must be local directories with a model config."""
    slug_check(name=name, what="system")
    if kind not in SystemKind.values:
        raise UserError(f"kind must be one of {', '.join(SystemKind.values)}, not {kind!r}")
    if dtype not in SystemDtype.values:
        raise UserError(f"dtype must be one of {', '.join(SystemDtype.values)}, not {dtype!r}")
    if compile_model and kind != SystemKind.CAUSAL:
        raise UserError(f"compiling applies to causal systems (their packed scoring path), not to a {kind} system")
    if chat_template and kind != SystemKind.CAUSAL:
        raise UserError(f"a chat template applies to causal systems, not to a {kind} system")
    if kind == SystemKind.PLUGIN:
        if not plugin:
            raise UserError("a plugin system needs --plugin (dotted path of a class with losses())")
        try:
            plugin_class = import_string(plugin)
        except ImportError as exc:
            raise UserError(f"cannot import plugin {plugin!r}: {exc}") from None
        if not callable(getattr(plugin_class, "losses", None)):
            raise UserError(f"plugin {plugin!r} has no losses(contexts, candidates) method")
        checkpoint = tokenizer_path = ""
    else:
        if not checkpoint:
            raise UserError(f"a {kind} system needs --checkpoint (a local model directory)")
        checkpoint = _local_dir(checkpoint, "config.json", "checkpoint")
        tokenizer_path = _local_dir(tokenizer_path, "tokenizer_config.json", "tokenizer") if tokenizer_path else ""
        if not tokenizer_path and not (Path(checkpoint) / "tokenizer_config.json").is_file():
            raise UserError(f"{checkpoint} has no tokenizer; give --tokenizer")
        if chat_template:
            _chat_template_check(tokenizer_path or checkpoint)
        plugin = ""
    values = {
        "kind": kind,
        "checkpoint": checkpoint,
        "tokenizer_path": tokenizer_path,
        "plugin": plugin,
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


def _local_dir(path: str, marker: str, what: str) -> str:
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise UserError(f"{what} {path} is not a local directory (models are never downloaded)")
    if not (folder / marker).is_file():
        raise UserError(f"{what} directory {folder} has no {marker}")
    return str(folder)
