"""Plugin systems: any class with ``losses(contexts, candidates)`` (per question, one loss per candidate)."""

import inspect
import math
from collections.abc import Sequence

from django.utils.module_loading import import_string

from .base import CandidateScore


class PluginScorer:
    """Wraps a plugin object: ``losses(contexts: list[list[str]], candidates: list[list[str]])``
    returns, per question, one loss per candidate (lower = more likely; the lowest is selected)."""

    def __init__(self, plugin) -> None:
        if not callable(getattr(plugin, "losses", None)):
            raise TypeError(f"{type(plugin).__name__} has no losses(contexts, candidates) method")
        self.plugin = plugin

    @classmethod
    def from_path(cls, dotted_path: str, **options) -> "PluginScorer":
        plugin_class = import_string(dotted_path)
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
