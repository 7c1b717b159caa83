"""A check of the masked LM before it manipulates anything: an under-trained model (a new MLM head
trained for too few steps, a random one) makes negatives that are all garbled ("Was this your
first time ?" -> "Was . your . time ?") and nothing else says so.

Measured on dialogue text the model is about to manipulate (the dataset's first questions: their
ground truths, each with its context), with the manipulation's own scoring pass, every word masked
whole as it is scored:

- **pseudo-perplexity** (Salazar et al., 2020), per word: ``exp(-mean log P(w | c, r\\w))`` over the
  words of the responses, each read with its context (the input the method scores with, and the
  one finetune_mlm trains on). A model that knows dialogue English predicts most masked words; a
  random one spreads its mass over the vocabulary (tens of thousands for BERT's).
- **context gain**: the mean of ``log P(w | c, r\\w) - log P(w | r\\w)`` (nats), the mean of the
  words' scores. The method rests on the context moving the scores; a model that never learnt to
  read the first segment gains nothing, or loses.

Both bars are documented in docs/negatives.md.
"""

import math
from dataclasses import dataclass

from .manipulation import Item, Manipulator

GUARD_WORDS = 300  # words measured: enough for a steady mean, a few seconds of a BERT-base on CPUs
MAX_PSEUDO_PERPLEXITY = 100.0  # per word; a random BERT scores about its vocabulary size (30,522)
MIN_CONTEXT_GAIN = 0.0  # nats per word: the context must help on average, not hurt


@dataclass(frozen=True)
class GuardMeasure:
    words: int
    responses: int
    pseudo_perplexity: float
    context_gain: float

    @property
    def passed(self) -> bool:
        return self.pseudo_perplexity <= MAX_PSEUDO_PERPLEXITY and self.context_gain >= MIN_CONTEXT_GAIN

    def describe(self) -> dict:
        return {
            "words": self.words,
            "responses": self.responses,
            "pseudo_perplexity": round(self.pseudo_perplexity, 2),
            "context_gain": round(self.context_gain, 4),
            "max_pseudo_perplexity": MAX_PSEUDO_PERPLEXITY,
            "min_context_gain": MIN_CONTEXT_GAIN,
            "passed": self.passed,
        }

    def failures(self) -> list[str]:
        """What falls short of the bar, in words."""
        failed = []
        if self.pseudo_perplexity > MAX_PSEUDO_PERPLEXITY:
            failed.append(
                f"pseudo-perplexity {self.pseudo_perplexity:,.1f} per word is above {MAX_PSEUDO_PERPLEXITY:,.0f}"
            )
        if self.context_gain < MIN_CONTEXT_GAIN:
            failed.append(
                f"the context moves a masked word's log-probability by {self.context_gain:+.3f} nats on average, "
                f"below {MIN_CONTEXT_GAIN:+.3f}"
            )
        return failed


def mlm_measure(manipulator: Manipulator, items: list[Item], *, words: int = GUARD_WORDS) -> GuardMeasure | None:
    """The guard's figures over the first ``words`` words of ``items`` (whole responses: the last one
    may go past); None when no item can be scored (all too short or too long)."""
    chosen, total = [], 0
    for item in items:
        encoded = manipulator.encode(item)
        if isinstance(encoded, str):
            continue
        chosen.append(encoded)
        total += len(encoded.words)
        if total >= words:
            break
    if not chosen:
        return None
    scores = [w for response in manipulator.score(chosen) for w in response]
    read = [w.logp_context for w in scores]
    return GuardMeasure(
        words=len(scores),
        responses=len(chosen),
        pseudo_perplexity=math.exp(-sum(read) / len(read)),
        context_gain=sum(w.score for w in scores) / len(scores),
    )
