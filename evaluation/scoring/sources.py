"""Where a system's model comes from: a checkpoint and tokenizer resolved (a local directory or a
Hugging Face id at a commit), or a plugin class. The backends (backends.py) check them with these."""

from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from django.conf import settings
from django.utils.module_loading import import_string

from core.errors import UserError
from core.hub import ResolvedModel, model_resolve

# the plugins WellChosen ships (evaluation/baselines.py); a deployment allows more in the setting
# WELLCHOSEN_PLUGINS or as entry points of this group in an installed package's metadata
SHIPPED_PLUGINS = ("evaluation.baselines.TfidfBaseline",)
PLUGIN_ENTRY_POINT_GROUP = "wellchosen.plugins"


@dataclass(frozen=True)
class SystemSources:
    """Where a system's model comes from, as stored: a local directory (absolute) or the hub id as
    given, with the commit it resolved to; or a plugin's dotted path."""

    checkpoint: str = ""
    checkpoint_revision: str = ""
    tokenizer_path: str = ""
    tokenizer_revision: str = ""
    plugin: str = ""


def checkpoint_sources(
    *,
    kind: str,
    checkpoint: str,
    tokenizer_path: str,
    chat_template: bool,
    checkpoint_revision: str,
    tokenizer_revision: str,
) -> SystemSources:
    """A checkpoint and its tokenizer resolved (a hub id is fetched into the Hugging Face cache);
    a revision, when given, pins a hub id to the commit recorded before."""
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


def plugin_class_check(plugin: str, *, method: str, usage: str):
    """The class at ``plugin`` (a dotted path), which the deployment allows and which has ``method``;
    a UserError otherwise. A path that is not allowed is refused before anything is imported: a
    worker runs a plugin's code, so a plugin is the deployment's choice, never a form field's."""
    plugin_allowed_check(plugin)
    try:
        plugin_class = import_string(plugin)
    except ImportError as exc:
        raise UserError(f"cannot import plugin {plugin!r}: {exc}") from None
    if not isinstance(plugin_class, type):
        raise UserError(f"plugin {plugin!r} is not a class")
    if not callable(getattr(plugin_class, method, None)):
        raise UserError(f"plugin {plugin!r} has no {usage} method")
    return plugin_class


def allowed_plugins() -> tuple[frozenset[str], frozenset[str]]:
    """(class paths, modules every class of which is allowed): the shipped plugins, the entry points
    of group ``wellchosen.plugins``, and WELLCHOSEN_PLUGINS."""
    classes = set(SHIPPED_PLUGINS)
    modules = set()
    for item in settings.WELLCHOSEN_PLUGINS:
        if item.endswith(".*"):
            modules.add(item[:-2])
        else:
            classes.add(item)
    for entry_point in entry_points(group=PLUGIN_ENTRY_POINT_GROUP):
        module, _, attribute = entry_point.value.partition(":")
        classes.add(f"{module.strip()}.{attribute.strip()}" if attribute else module.strip())
    return frozenset(classes), frozenset(modules)


def plugin_allowed_check(plugin: str) -> None:
    classes, modules = allowed_plugins()
    module, _, name = plugin.rpartition(".")
    if plugin in classes or (module in modules and name.isidentifier() and not name.startswith("_")):
        return
    raise UserError(
        f"plugin {plugin!r} is not allowed on this deployment: a plugin is one of the shipped baselines "
        f"({', '.join(SHIPPED_PLUGINS)}), an entry point of group {PLUGIN_ENTRY_POINT_GROUP!r} of an installed "
        "package, or a class named in the setting WELLCHOSEN_PLUGINS"
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


def _chat_template_check(tokenizer_dir: str) -> None:
    """A UserError unless the tokenizer in ``tokenizer_dir`` carries a chat template that renders our contexts."""
    from transformers import AutoTokenizer

    from .chat import chat_template_check

    try:
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot load the tokenizer in {tokenizer_dir}: {exc}") from None
    chat_template_check(tokenizer, where=tokenizer_dir)
