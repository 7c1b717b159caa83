"""Plugin systems: any class with ``losses(contexts, candidates)`` (per question, one loss per candidate)."""

import inspect
import math
from collections.abc import Sequence
from dataclasses import asdict

from .base import CandidateScore
from .decoding import Decoding, Response


class PluginScorer:
    """Wraps a plugin object: ``losses(contexts: list[list[str]], candidates: list[list[str]])``
    returns, per question, one loss per candidate (lower = more likely; the lowest is selected)."""

    def __init__(self, plugin) -> None:
        if not callable(getattr(plugin, "losses", None)):
            raise TypeError(f"{type(plugin).__name__} has no losses(contexts, candidates) method")
        self.plugin = plugin

    @classmethod
    def from_class(cls, plugin_class: type, **options) -> "PluginScorer":
        """An instance of ``plugin_class`` with the ``options`` its constructor accepts (e.g. ``system``).
        The class comes from the plugin backend, which checks that the deployment allows it."""
        accepted = inspect.signature(plugin_class).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
        kwargs = {k: v for k, v in options.items() if takes_any or k in accepted}
        return cls(plugin_class(**kwargs))

    def score(
        self, contexts: Sequence[Sequence[str]], candidates: Sequence[Sequence[str]], *, naive: bool = False
    ) -> list[list[CandidateScore]]:
        losses = self.plugin.losses([list(c) for c in contexts], [list(c) for c in candidates])
        if len(losses) != len(candidates):
            raise ValueError(f"plugin returned losses for {len(losses)} questions, expected {len(candidates)}")
        results = []
        for question_losses, cands in zip(losses, candidates, strict=True):
            values = [float(v) for v in question_losses]
            if len(values) != len(cands) or not all(math.isfinite(v) for v in values):
                raise ValueError(f"plugin must return {len(cands)} finite losses per question, got {question_losses!r}")
            results.append([CandidateScore(loss=v) for v in values])
        return results


class PluginGenerator:
    """A plugin's ``generate(contexts: list[list[str]]) -> list[str]``. It may also accept any of the
    keywords ``strategy``, ``top_p``, ``temperature``, ``max_new_tokens`` and ``seeds``."""

    def __init__(self, plugin) -> None:
        if not callable(getattr(plugin, "generate", None)):
            raise TypeError(f"{type(plugin).__name__} has no generate(contexts) method")
        self.plugin = plugin
        accepted = inspect.signature(plugin.generate).parameters
        self._takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
        self._accepted = set(accepted)

    def generate(
        self, contexts: Sequence[Sequence[str]], *, decoding: Decoding = Decoding(), seeds: Sequence[int] | None = None
    ) -> list[Response]:
        options = {**asdict(decoding), "seeds": list(seeds) if seeds is not None else None}
        kwargs = {k: v for k, v in options.items() if self._takes_any or k in self._accepted}
        texts = self.plugin.generate([list(c) for c in contexts], **kwargs)
        if len(texts) != len(contexts) or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"plugin must return {len(contexts)} strings, one per context, got {texts!r:.200}")
        return [Response(t.strip()) for t in texts]
