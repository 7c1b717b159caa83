"""Words of a response with their character spans, for rules that replace one word in place.

Dialogue corpora come in two spellings: plain text ("I don't know.") and tokenised text with
spaces around punctuation and split contractions (DailyDialog: "I don ’ t know ."). Rules work on
spans of the original string and splice replacements into it, so either spelling is kept as is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-'’][A-Za-z0-9]+)*|[^\sA-Za-z0-9]")
_SENTENCE_END = frozenset(".?!")


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def is_word(self) -> bool:
        return self.text[0].isalnum()


def tokens(text: str) -> list[Token]:
    return [Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def sentences(text: str) -> list[list[Token]]:
    """Tokens split after each run of sentence-final punctuation (``.``, ``?``, ``!``)."""
    out: list[list[Token]] = []
    current: list[Token] = []
    for i, token in enumerate(text_tokens := tokens(text)):
        current.append(token)
        nxt = text_tokens[i + 1] if i + 1 < len(text_tokens) else None
        if token.text in _SENTENCE_END and (nxt is None or nxt.text not in _SENTENCE_END):
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def splice(text: str, start: int, end: int, replacement: str) -> tuple[str, tuple[int, int]]:
    """``text`` with ``[start, end)`` replaced; returns the new text and the replacement's span in it."""
    return text[:start] + replacement + text[end:], (start, start + len(replacement))


def common_ends(a: Sequence, b: Sequence) -> tuple[int, int]:
    """The lengths of the longest common prefix and of the longest common suffix that does not
    overlap it (characters of two strings, ids of two token lists)."""
    limit = min(len(a), len(b))
    prefix = 0
    while prefix < limit and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return prefix, suffix


def edit_spans(correct: str, incorrect: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The smallest whole-word spans outside which the two texts are the same: what a reviewer's
    edit or a hand-made pair changed, for highlighting."""
    prefix, suffix = common_ends(correct, incorrect)
    # widen to word boundaries: "cat" -> "car" highlights the word, not the last letter
    while prefix > 0 and correct[prefix - 1].isalnum():
        prefix -= 1
    while suffix > 0 and correct[len(correct) - suffix].isalnum():
        suffix -= 1
    return (prefix, len(correct) - suffix), (prefix, len(incorrect) - suffix)
