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

from .loading import scorer_for


def generator_for(system, *, device: str | None = None, batch_size: int = 32):
    """The generator of a System, on the model its cached scorer loaded (one load per worker process)."""
    from .backends import backend_for

    return backend_for(system).generator(system, scorer_for(system, device=device), batch_size=batch_size)
