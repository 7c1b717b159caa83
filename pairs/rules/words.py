"""A sentence as words that can be moved, replaced and re-rendered in the response's own spelling.

Contractions are split into their parts so that a rule can move "are" of "you're" or drop "n't" of
"don't": "don't" -> "do" + "n't", "I ’ m" -> "I" + "'m", "cannot" -> "can" + "not". Each part keeps
its original text and the whitespace before it; rendering an unchanged list gives the original
text back, and new words are spelt like the response (DailyDialog's "don ’ t ." or plain "don't.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from pairs.text import Token

APOSTROPHES = "'’"
CLITICS = frozenset({"t", "s", "m", "re", "ve", "ll", "d"})
# Stems of "n't" whose spelling is not the auxiliary's: can't, won't, shan't.
NEGATED_STEMS = {"ca": "can", "wo": "will", "sha": "shall"}
# "'s" is "is"/"has" after these, a possessive elsewhere ("John's car").
S_CLITIC_HOSTS = frozenset({"it", "he", "she", "that", "there", "what", "who", "where", "here", "how", "this"})
PUNCTUATION = frozenset(".,?!;:")
ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "vs", "etc", "e.g", "i.e", "no"})


@dataclass(frozen=True)
class Word:
    norm: str  # lower case, plain apostrophe: "do", "n't", "'m", "i", ","
    text: str  # as spelt in the response ("’ m" in tokenised text)
    gap: str = " "  # whitespace before it in the response
    index: int | None = None  # position in the original sentence; None for a new or changed word
    fresh: bool = False  # a new word: its apostrophes are spelt like the response's

    @property
    def is_word(self) -> bool:
        return self.norm[:1].isalnum() or self.norm[:1] == "'"


@dataclass(frozen=True)
class Style:
    """How the response spells punctuation and contractions."""

    punct_spaced: bool  # "know ." rather than "know."
    clitic_spaced: bool  # "don ’ t" rather than "don't"
    apostrophe: str

    @classmethod
    def of(cls, text: str) -> Style:
        punct_spaced = bool(re.search(r"\w [.,?!]", text)) or not re.search(r"\w[.,?!]", text)
        # DailyDialog writes both "don ’ t" and "don't" (the latter twice as often): follow the
        # response's own contractions, else the plain spelling.
        spaced = re.search(r"\w (['’]) \w", text)
        joined = re.search(r"\w(['’])\w", text)
        clitic_spaced = bool(spaced)
        apostrophe = (spaced or joined).group(1) if (spaced or joined) else "'"
        return cls(punct_spaced, clitic_spaced, apostrophe)

    def spell(self, word: str) -> str:
        return word.replace("'", f" {self.apostrophe} " if self.clitic_spaced else self.apostrophe)

    def gap_before(self, word: str) -> str:
        return "" if word in PUNCTUATION and not self.punct_spaced else " "


def new_word(text: str) -> Word:
    """A word the rule adds, written with a plain apostrophe ("don't")."""
    return Word(norm=text.lower(), text=text, fresh=True)


def _merge_contractions(text: str, tokens: list[Token]) -> list[tuple[str, int, int]]:
    """Token texts and spans with "don ’ t" / "I ’ m" joined into one contraction."""
    out: list[tuple[str, int, int]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if (
            i + 2 < len(tokens)
            and token.is_word
            and tokens[i + 1].text in APOSTROPHES
            and tokens[i + 2].lower in CLITICS
            and (tokens[i + 2].lower != "t" or token.lower.endswith("n"))
            and not text[token.end : tokens[i + 2].start].strip(" " + APOSTROPHES)
        ):
            out.append((text[token.start : tokens[i + 2].end], token.start, tokens[i + 2].end))
            i += 3
        else:
            out.append((token.text, token.start, token.end))
            i += 1
    return out


def _split(surface: str) -> list[tuple[str, str, str]]:
    """(norm, text, gap) parts of one surface word."""
    norm = re.sub(r"\s+", "", surface.lower()).replace("’", "'")
    if norm == "cannot":
        return [("can", surface[:3], ""), ("not", surface[3:], "")]
    if norm.endswith("n't") and len(norm) > 3:
        stem = norm[:-3]
        cut = len(stem)
        return [(NEGATED_STEMS.get(stem, stem), surface[:cut], ""), ("n't", surface[cut:], "")]
    match = re.fullmatch(r"([a-z]+)'(m|re|s|ve|ll|d)", norm)
    if match and (match.group(2) != "s" or match.group(1) in S_CLITIC_HOSTS):
        cut = len(match.group(1))
        rest = surface[cut:]
        return [
            (match.group(1), surface[:cut], ""),
            ("'" + match.group(2), rest.lstrip(), rest[: len(rest) - len(rest.lstrip())]),
        ]
    return [(norm, surface, "")]


def sentence_words(text: str, tokens: list[Token]) -> list[Word]:
    """The words of one sentence (``tokens`` of ``text``), contractions split into their parts."""
    words: list[Word] = []
    previous_end = None
    for surface, start, _end in _merge_contractions(text, tokens):
        gap = "" if previous_end is None else text[previous_end:start]
        for k, (norm, part, part_gap) in enumerate(_split(surface)):
            words.append(Word(norm=norm, text=part, gap=gap if k == 0 else part_gap, index=len(words)))
        previous_end = _end
    return words


def render(words: list[Word], style: Style) -> tuple[str, list[tuple[int, int]]]:
    """The sentence text and each word's span in it; a word keeps its original gap while it
    follows its original predecessor."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0
    for k, word in enumerate(words):
        text = style.spell(word.text) if word.fresh else word.text
        if k == 0:
            gap = ""
        elif word.index is not None and words[k - 1].index == word.index - 1:
            gap = word.gap
        else:
            gap = style.gap_before(word.norm)
        parts.append(gap + text)
        spans.append((length + len(gap), length + len(gap) + len(text)))
        length += len(gap) + len(text)
    return "".join(parts), spans


def recase(word: Word, capital: bool) -> Word:
    """``word`` with its first letter upper or lower case (a changed word loses its index)."""
    text = word.text
    cased = (text[:1].upper() if capital else text[:1].lower()) + text[1:]
    return word if cased == text else replace(word, text=cased, index=None)


def is_capitalised(word: Word) -> bool:
    return word.text[:1].isupper()
