"""What every scorer returns, and the context template shared by all of them."""

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CandidateScore:
    """How unlikely a system finds one candidate given the context.

    ``loss`` is the mean token cross-entropy (nats) over the candidate's tokens, padding
    excluded; ``sum_logprob`` the summed token log-probability (None for a plugin that only
    gives losses). A system selects the candidate with the lowest loss.
    """

    loss: float
    sum_logprob: float | None = None
    n_tokens: int | None = None


@dataclass(frozen=True)
class ContextTemplate:
    """Turns -> conditioning text: ``[tag]turn SEP [tag]turn SEP ... [tag]`` (the candidate follows).

    ``separator`` may contain ``{eos}``, replaced by the tokenizer's end-of-sequence token.
    """

    separator: str = "\n"
    speaker_tags: bool = False

    def render(self, turns: Sequence[str], *, eos: str = "") -> str:
        sep = self.separator.replace("{eos}", eos)
        tags = ["A: ", "B: "] if self.speaker_tags else ["", ""]
        # The candidate is the next turn: speakers alternate backwards from it.
        n = len(turns)
        parts = [f"{tags[(n - i) % 2]}{turn}{sep}" for i, turn in enumerate(turns)]
        return "".join(parts) + tags[0]


def select(scores: Sequence[CandidateScore], *, rule: str = "loss") -> int:
    """Index of the selected candidate: lowest mean loss (``loss``) or highest summed log-prob (``sum``)."""
    if rule == "loss":
        keys = [s.loss for s in scores]
    elif rule == "sum":
        keys = [-(s.sum_logprob if s.sum_logprob is not None else -math.inf) for s in scores]
    else:
        raise ValueError(f"unknown selection rule {rule!r}")
    return min(range(len(keys)), key=lambda i: (keys[i], i))
