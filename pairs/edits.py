"""What every pair rule returns: minimal edits of a correct response (Okano et al.).

A rule reads the context and the correct response and proposes edits, each the whole incorrect
response with the character spans that changed; when it can propose none it says why
(``skipped``), and the build job counts the reasons. Rules are deterministic for a given
``random.Random``: the build seeds one per (seed, question, rule).
"""

from __future__ import annotations

import hashlib
import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar


class PairType:
    CONTENT = "content"  # a context-sensitive noun replaced (EL or ML criterion)
    SENTENCE = "sentence"  # declarative <-> interrogative, affirmative <-> negative
    FUNCTION = "function"  # a preposition or phrasal-verb particle replaced

    ALL = (CONTENT, SENTENCE, FUNCTION)


class Criterion:
    EQUALLY_LIKELY = "el"
    MOST_LIKELY = "ml"

    ALL = (EQUALLY_LIKELY, MOST_LIKELY)


@dataclass(frozen=True)
class Edit:
    """One incorrect response: ``correct[span]`` became ``incorrect[incorrect_span]``."""

    type: str
    subtype: str
    incorrect: str
    span: tuple[int, int]  # [start, end) in the correct response
    incorrect_span: tuple[int, int]  # [start, end) in the incorrect response
    criterion: str = ""  # Criterion for content words, "" otherwise
    details: dict = field(default_factory=dict)  # JSON-able: the words replaced, scores; kept as provenance


@dataclass(frozen=True)
class RuleOutcome:
    edits: list[Edit]
    skipped: str = ""  # snake_case reason when there is no edit, e.g. "no_noun", "unsupported_clause"


class EditRule(ABC):
    """One pair type. ``per_question`` caps the edits returned (per criterion where there are criteria)."""

    type: ClassVar[str]

    @abstractmethod
    def propose(
        self, *, context: Sequence[str], response: str, rng: random.Random, per_question: int = 1
    ) -> RuleOutcome: ...

    def version(self) -> str:
        """What the rule's output depends on besides its input (table versions, model digests)."""
        return type(self).__name__


def rule_rng(*, seed: int, rule_type: str, context: Sequence[str], response: str) -> random.Random:
    """The generator a rule draws from for one dialogue: seeded by its texts, not database ids, so
    the same dialogue gets the same edits in any database and any batch."""
    texts = "\n".join([str(seed), rule_type, *context, response])
    return random.Random(int(hashlib.sha256(texts.encode()).hexdigest()[:16], 16))
