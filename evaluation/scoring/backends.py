"""Scoring backends: what each kind of system is scored and decoded with, behind one interface.

A System's ``kind`` names its backend in :data:`BACKENDS` (as crowd providers are named in
crowd/providers/registry.py); callers ask the backend (``backend_for(system)``) instead of
branching on the kind. Models load lazily: building a backend imports nothing heavy.
"""

from abc import ABC, abstractmethod

from core.errors import UserError
from core.toy_models import folder_is_toy

from .checkpoints import load_model, template_for
from .plugin import PluginGenerator, PluginScorer
from .sources import SystemSources, checkpoint_sources, plugin_class_check


class Backend(ABC):
    """How the systems of one kind score candidates (lower loss: preferred) and generate responses."""

    kind: str
    scores: bool = True  # False: responses only (ranked by people and metrics, never by losses)
    compiles: bool = False  # whether ``compile_model`` applies (a torch.compile'd scoring path)
    chat_templates: bool = False  # whether ``chat_template`` applies (contexts as chat messages)

    @abstractmethod
    def sources(
        self,
        *,
        checkpoint: str,
        tokenizer_path: str,
        plugin: str,
        chat_template: bool,
        checkpoint_revision: str,
        tokenizer_revision: str,
    ) -> SystemSources:
        """What a system of this kind runs, checked (a UserError when it cannot run) and as stored."""

    def options_check(self, *, compile_model: bool, chat_template: bool) -> None:
        """A UserError for an option that does not apply to this kind."""
        if compile_model and not self.compiles:
            kinds = " or ".join(k for k, b in BACKENDS.items() if b.compiles)
            raise UserError(
                f"compiling applies to {kinds} systems (their packed scoring path), not to a {self.kind} system"
            )
        if chat_template and not self.chat_templates:
            kinds = " or ".join(k for k, b in BACKENDS.items() if b.chat_templates)
            raise UserError(f"a chat template applies to {kinds} systems, not to a {self.kind} system")

    def toy_model(self, system) -> bool:
        """Whether the system's checkpoint is a toy model (its folder's marker)."""
        return folder_is_toy(system.checkpoint)

    def losses_are_independent(self, scorer) -> bool:
        """Whether a candidate's loss does not depend on the other candidates scored with it, so that
        a ground truth's loss can be computed once and reused (RANDOM trials)."""
        return True

    @abstractmethod
    def scorer(self, system, *, device: str | None):
        """A new scorer for ``system`` (its model loaded on ``device``); loading.scorer_for caches it."""

    @abstractmethod
    def generator(self, system, scorer, *, batch_size: int):
        """A generator on the model that ``scorer`` loaded."""

    def check_can_generate(self, system) -> None:  # noqa: B027 (every checkpoint generates: no check by default)
        """A UserError when ``system`` cannot generate responses."""


class LanguageModelBackend(Backend):
    """A Hugging Face checkpoint: causal or encoder-decoder."""

    def __init__(self, kind: str, *, compiles: bool, chat_templates: bool):
        self.kind = kind
        self.compiles = compiles
        self.chat_templates = chat_templates

    def sources(self, *, checkpoint, tokenizer_path, plugin, chat_template, checkpoint_revision, tokenizer_revision):
        return checkpoint_sources(
            kind=self.kind,
            checkpoint=checkpoint,
            tokenizer_path=tokenizer_path,
            chat_template=chat_template,
            checkpoint_revision=checkpoint_revision,
            tokenizer_revision=tokenizer_revision,
        )

    def scorer(self, system, *, device: str | None):
        from .lm import LMScorer

        model, tokenizer = load_model(
            kind=self.kind,
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
            kind=self.kind,
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

    def generator(self, system, scorer, *, batch_size: int):
        from .lm_generate import LMGenerator

        return LMGenerator(
            model=scorer.model,
            tokenizer=scorer.tokenizer,
            kind=self.kind,
            template=scorer.template,
            max_context_tokens=system.max_context_tokens,
            batch_size=batch_size,
        )


class PluginBackend(Backend):
    """A class of ours or the researcher's: ``losses(contexts, candidates)``, optionally ``generate``."""

    kind = "plugin"

    def sources(self, *, checkpoint, tokenizer_path, plugin, chat_template, checkpoint_revision, tokenizer_revision):
        if not plugin:
            raise UserError("a plugin system needs --plugin (dotted path of a class with losses())")
        plugin_class_check(plugin, method="losses", usage="losses(contexts, candidates)")
        return SystemSources(checkpoint=checkpoint.strip(), plugin=plugin)  # what the plugin reads, if anything

    def toy_model(self, system) -> bool:
        return False

    def losses_are_independent(self, scorer) -> bool:
        # a plugin says so itself: a model that scores a question's candidates jointly cannot
        return bool(getattr(scorer.plugin, "losses_are_independent", False))

    def scorer(self, system, *, device: str | None):
        # checked again where it runs: a row saved before the allow-list, or by other means
        plugin_class = plugin_class_check(system.plugin, method="losses", usage="losses(contexts, candidates)")
        return PluginScorer.from_class(plugin_class, system=system)

    def generator(self, system, scorer, *, batch_size: int):
        return PluginGenerator(scorer.plugin)

    def check_can_generate(self, system) -> None:
        plugin_class = plugin_class_check(system.plugin, method="losses", usage="losses(contexts, candidates)")
        if not callable(getattr(plugin_class, "generate", None)):
            raise UserError(
                f"plugin {system.plugin} of system {system.name} has no generate(contexts) method: "
                "it can score candidates but not generate responses"
            )


class ExternalBackend(Backend):
    """Responses imported with their human ratings (e.g. Zhao et al.'s systems): no model here."""

    kind = "external"
    scores = False

    def sources(self, *, checkpoint, tokenizer_path, plugin, chat_template, checkpoint_revision, tokenizer_revision):
        return SystemSources(checkpoint=checkpoint, tokenizer_path=tokenizer_path)  # names only: nothing runs

    def scorer(self, system, *, device: str | None):
        raise UserError(f"system {system.name} is external (imported responses only): it cannot be scored")

    def generator(self, system, scorer, *, batch_size: int):
        self.check_can_generate(system)

    def check_can_generate(self, system) -> None:
        raise UserError(f"system {system.name} is external (imported responses only): it cannot generate")


BACKENDS: dict[str, Backend] = {
    backend.kind: backend
    for backend in (
        LanguageModelBackend("causal", compiles=True, chat_templates=True),
        LanguageModelBackend("seq2seq", compiles=False, chat_templates=False),
        PluginBackend(),
        ExternalBackend(),
    )
}


def backend_named(kind: str) -> Backend:
    try:
        return BACKENDS[kind]
    except KeyError:
        raise UserError(f"kind must be one of {', '.join(BACKENDS)}, not {kind!r}") from None


def backend_for(system) -> Backend:
    try:
        return BACKENDS[system.kind]
    except KeyError:
        raise UserError(f"system {system.name}: no scoring backend for kind {system.kind!r}") from None


def scoring_kinds() -> list[str]:
    """The kinds whose systems are scored (on a test set, on pairs) and can be asked to generate."""
    return [kind for kind, backend in BACKENDS.items() if backend.scores]
