"""Responses from a system: batched greedy or seeded nucleus decoding (the ``generate`` job).

The conditioning text is the System's context template (plain, or the tokenizer's chat template
with the prompt of the next assistant message; chat.py), rendered and truncated exactly as for
scoring, and the model is the one its scorer loaded (:func:`scorer_for`: once per worker
process, shared by scoring and generation). Hugging Face models run in lm_generate.py (torch is
imported only there, so that the web process never loads it).

Decoding is the same for every system, so that "greedy" compares like with like:

* **plain decoding**: one beam, no repetition penalty, no n-gram blocking, no minimum length, whatever
  the checkpoint's ``generation_config.json`` says (its token ids, forced tokens included, are kept);
* **stop rules**: the end-of-sequence token; and the turn separator, since the response is one turn:
  a separator with a newline stops at the first newline, a textual one (`` __eou__ ``) at that text;
  a separator of spaces or ``{eos}`` only stops at the end-of-sequence token. Through a chat
  template, the template's end-of-turn token (``<|im_end|>``, ``<|eot_id|>``...) stops it, and the
  separator plays no part. The response is what comes before the stop, stripped. ``n_tokens`` is
  its length in the system's tokens;
* **nucleus** (top-p after temperature): every context has its own random stream, seeded from the
  generation's seed and the context's key (:func:`context_seed`), so a response depends neither on
  the contexts that share its batch, nor on the batch size, nor on resuming. The same seed gives the
  same responses on the same kind of device (the CPU and CUDA generators differ) and dtype.
"""

import inspect
from collections.abc import Sequence
from dataclasses import asdict

from .decoding import Decoding, Response
from .loading import scorer_for
from .plugin import PluginScorer


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
