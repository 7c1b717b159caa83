"""How every system decodes (see generate.py for the rules): the decoding settings, a response,
the per-context random seed and the stop rules. Shared by the plugin and Hugging Face generators."""

import hashlib
from dataclasses import dataclass

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
