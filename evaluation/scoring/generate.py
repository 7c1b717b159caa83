"""Responses from a system: batched greedy or seeded nucleus decoding (the ``generate`` job).

The conditioning text is the System's context template, rendered and truncated (end kept) exactly
as for scoring, and the model is the one its scorer loaded (:func:`scorer_for`: once per worker
process, shared by scoring and generation). Hugging Face models run in lm_generate.py (torch is
imported only there, so that the web process never loads it).

Decoding is the same for every system, so that "greedy" compares like with like:

* **plain decoding**: one beam, no repetition penalty, no n-gram blocking, no minimum length, whatever
  the checkpoint's ``generation_config.json`` says (its token ids, forced tokens included, are kept);
* **stop rules**: the end-of-sequence token; and the turn separator, since the response is one turn:
  a separator with a newline stops at the first newline, a textual one (`` __eou__ ``) at that text;
  a separator of spaces or ``{eos}`` only stops at the end-of-sequence token. The response is what
  comes before the stop, stripped. ``n_tokens`` is its length in the system's tokens;
* **nucleus** (top-p after temperature): every context has its own random stream, seeded from the
  generation's seed and the context's key (:func:`context_seed`), so a response depends neither on
  the contexts that share its batch, nor on the batch size, nor on resuming. The same seed gives the
  same responses on the same kind of device (the CPU and CUDA generators differ) and dtype.
"""

import hashlib
import inspect
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from .loading import scorer_for
from .plugin import PluginScorer

STRATEGIES = ("greedy", "nucleus")


@dataclass(frozen=True)
class Decoding:
    strategy: str = "greedy"
    top_p: float = 0.9
    temperature: float = 1.0
    max_new_tokens: int = 40

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown decoding strategy {self.strategy!r}; expected one of {STRATEGIES}")


@dataclass(frozen=True)
class Response:
    text: str
    n_tokens: int | None = None


def context_seed(seed: int, context_key: str) -> int:
    """The random seed of one context: stable across processes, batches and resumed runs."""
    digest = hashlib.sha256(f"{seed}:{context_key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def stop_text(separator: str) -> str | None:
    """Where a response ends besides the end-of-sequence token (see the module docstring)."""
    text = separator.replace("{eos}", "")
    if "\n" in text:
        return "\n"
    return text.strip() or None


def cut(text: str, stop: str | None) -> str:
    if stop and stop in text:
        text = text[: text.index(stop)]
    return text.strip()


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


def generator_for(system, *, device: str | None = None, batch_size: int = 32):
    """The generator of a System, on the model its cached scorer loaded (one load per worker process)."""
    scorer = scorer_for(system, device=device)
    if isinstance(scorer, PluginScorer):
        return PluginGenerator(scorer.plugin)
    from .lm_generate import LMGenerator

    return LMGenerator(
        model=scorer.model,
        tokenizer=scorer.tokenizer,
        kind=system.kind,
        template=scorer.template,
        max_context_tokens=system.max_context_tokens,
        batch_size=batch_size,
    )
