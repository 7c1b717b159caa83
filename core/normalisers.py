"""Style normalisers applied to texts at import (``import_dialogues`` / ``import_repository
--normalise NAME``), so that a dataset and the repository its false candidates come from are written
alike.

DailyDialog is tokenised ("I ’ m fine , thanks .", "Say , Jim , how about ... ?") where subtitles are
not ("I'm fine, thanks."); subtitles carry markup ("<i>", "{\\an8}", "- ", "[DOOR SLAMS]", "♪").
A context-free classifier tells a ground truth from its false candidates by that style alone
(testsets.shortcuts), so the style is undone at import, the same way on both sides.

Each normaliser is a class with a ``name`` and a ``version`` (recorded on the dataset or repository:
a change of its rules is a new version) and ``normalise(text) -> text``. They work on a text already
whitespace-cleaned (core.text.clean_text) and return one. Where core.text.normalize_text already
treats two spellings as one (spacing, punctuation, formatting tags, spaced apostrophes), the output
keeps the input's text_hash, so de-duplication and exclusions are unchanged; a text whose content
changes (a removed "[DOOR SLAMS]", a rejoined Penn "do n't") gets the hash of what it now says.
"""

import re
from typing import ClassVar

from core.errors import UserError
from core.text import clean_text, strip_formatting_tags


class TextNormaliser:
    """One normaliser: its name, version, a line for the choices, and its rules."""

    name: ClassVar[str]
    version: ClassVar[int]
    description: ClassVar[str]
    # False for the identity alone: an import then skips the normaliser's work and its counts.
    changes_text: ClassVar[bool] = True

    def normalise(self, text: str) -> str:
        raise NotImplementedError


class NoNormaliser(TextNormaliser):
    """The default: texts as the file has them (whitespace-cleaned, as every import does)."""

    name = "none"
    version = 1
    description = "texts as the file has them"
    changes_text = False

    def normalise(self, text: str) -> str:
        return text


# Tokens a tokeniser split off a word, rejoined to it: an apostrophe with spaces around it ("I ’ m",
# "don ' t"), before it ("I 'm", "John 's") or the Penn Treebank's "n't" ("do n't"). Only these
# endings: a lone quote before any other word opens a quotation ("called ' the ...").
_CLITIC = r"(?:s|m|re|ve|ll|d)"
# (Each pattern starts with its literal space, the lookbehind after it: the engine then looks for the
# space instead of trying every position; a step whose mark is absent is not run.)
_SPACED_APOSTROPHE = re.compile(rf" (?<=\w )['’] ?({_CLITIC})(?!\w)| (?<=n )['’] (t)(?!\w)", re.IGNORECASE)
_APOSTROPHE_BOTH_SIDES = re.compile(r" (?<=\b[oO] )['’] (?=clock\b)| (?<=\b[mM]a )['’] (?=am\b)")
_PENN_NOT = re.compile(r" (?<=\w )(n't)(?!\w)", re.IGNORECASE)
_PENN_SPLITS = re.compile(r"\b(gon|wan|got) (na|ta)\b", re.IGNORECASE)
# No space before closing punctuation (runs of it too: "... ?", "! !"), none after an opening one.
_SPACE_BEFORE = re.compile(r" +(?=[,.!?;:%)\]}])")
_SPACE_AFTER = re.compile(r"([(\[{$]) +")
_TIME = re.compile(r" (?<=\d ): (?=\d)")
_QUOTE = '"'


def _clitic(match: re.Match) -> str:
    ending = match.group(1) or match.group(2)
    # DailyDialog writes "I ’ Ve", "We ’ Re": a two-letter ending is never capitalised on its own
    return "'" + (ending.lower() if len(ending) > 1 and ending.istitle() else ending)


def _quotes_joined(text: str) -> str:
    """Standalone double quotes glued to what they enclose ('He said , " Hi . "' -> 'He said , "Hi ."'),
    when they pair up (an odd count is left as it is)."""
    tokens = text.split(" ")
    if tokens.count(_QUOTE) % 2:
        return text
    out: list[str] = []
    opening, glue_next = True, False
    for token in tokens:
        if token == _QUOTE:
            if opening:
                out.append(_QUOTE)
                glue_next = True
            elif out:
                out[-1] += _QUOTE
            else:
                out.append(_QUOTE)
            opening = not opening
            continue
        if glue_next and out:
            out[-1] += token
        else:
            out.append(token)
        glue_next = False
    return " ".join(out)


class Detokenize(TextNormaliser):
    """Undo Penn Treebank / DailyDialog tokenisation: no space before , . ! ? ; : % ) ] } (nor
    inside "... ?"), none after ( [ { $, clitics rejoined ("I ’ m" -> "I'm", "do n't" -> "don't",
    "John 's" -> "John's", "gon na" -> "gonna"), spaced double quotes glued to what they enclose,
    "10 : 30" -> "10:30". "can not" stays: it is English as written. Nothing else changes."""

    name = "detokenize"
    version = 1
    description = "undo DailyDialog/Penn tokenisation (spaces before punctuation, split clitics)"

    def normalise(self, text: str) -> str:
        if " " not in text:
            return text
        if "'" in text or "’" in text:
            text = _SPACED_APOSTROPHE.sub(_clitic, text)
            if "clock" in text or " am" in text:
                text = _APOSTROPHE_BOTH_SIDES.sub("'", text)
            if "n't" in text or "N'T" in text:
                text = _PENN_NOT.sub(r"\1", text)
        if " na" in text or " ta" in text or " NA" in text or " TA" in text:
            text = _PENN_SPLITS.sub(r"\1\2", text)
        if _QUOTE in text:
            text = _quotes_joined(text)
        if " : " in text:
            text = _TIME.sub(":", text)
        text = _SPACE_BEFORE.sub("", text)
        if "(" in text or "[" in text or "{" in text or "$" in text:
            text = _SPACE_AFTER.sub(r"\1", text)
        return text


# ASS/SSA override blocks ("{\an8}", "{\i1}"): presentation, not content.
_OVERRIDE = re.compile(r"\{\\[^{}]*\}")
# Hearing-impaired descriptions at the start of a line: "[DOOR SLAMS]", "(SIGHS)" (capitals only:
# a parenthesis in lower case is usually part of what is said).
_SOUND_PREFIX = re.compile(r"^(?:\[[^\[\]]*\]|\((?=[^()]*[A-Z])[^()a-z]*\))[\s:]*")
_MUSIC = re.compile(r"[♪♫]+")
# A dialogue dash: at the start of the line, or after the end of the first speaker's sentence. One
# dash: a screenplay's "--" marks a line cut off or carried on, which is said, not markup.
_LEADING_DASH = re.compile(r"^[-‐–—](?![-‐–—]) *(?=\D)")
_SPEAKER_DASH = re.compile(r"(?<=[.!?…]) [-‐–—](?![-‐–—]) +")


class Subtitles(TextNormaliser):
    """Strip subtitle markup: formatting tags (<i>, <font ...>), ASS/SSA override blocks ({\\an8}),
    dialogue dashes ("- Hi. - Hello." -> "Hi. Hello."), hearing-impaired descriptions in brackets
    when they make the whole text or start it ("[DOOR SLAMS] Who's there?"), music notes; then the
    whitespace. A text that was nothing but markup becomes empty (an import skips or refuses it)."""

    name = "subtitles"
    version = 1
    description = "strip subtitle markup (tags, {\\an8}, dialogue dashes, [SOUNDS], ♪)"

    def normalise(self, text: str) -> str:
        if "<" in text:
            text = strip_formatting_tags(text)
        if "{" in text:
            text = _OVERRIDE.sub(" ", text)
        if "♪" in text or "♫" in text:
            text = _MUSIC.sub(" ", text)
        text = text.strip()
        while True:
            stripped = _SOUND_PREFIX.sub("", _LEADING_DASH.sub("", text), count=1)
            if stripped == text:
                break
            text = stripped
        if " -" in text or " ‐" in text or " –" in text or " —" in text:
            text = _SPEAKER_DASH.sub(" ", text)
        return clean_text(text)


class Standard(TextNormaliser):
    """Both: subtitle markup stripped, then tokenisation undone. What a mixed dataset and repository
    (DailyDialog beside subtitles) both want: each step leaves the other's texts as they are."""

    name = "standard"
    version = 1
    description = "subtitles, then detokenize"

    def normalise(self, text: str) -> str:
        return _DETOKENIZE.normalise(_SUBTITLES.normalise(text))


_DETOKENIZE, _SUBTITLES = Detokenize(), Subtitles()
NORMALISERS: dict[str, TextNormaliser] = {n.name: n for n in (NoNormaliser(), _DETOKENIZE, _SUBTITLES, Standard())}
DEFAULT_NORMALISER = "none"


def normaliser_get(name: str) -> TextNormaliser:
    """The normaliser ``name``, or a UserError naming the choices."""
    try:
        return NORMALISERS[name]
    except (KeyError, TypeError):
        raise UserError(f"unknown normaliser {name!r}; expected one of {', '.join(NORMALISERS)}") from None


def normaliser_label(name: str, version: int | None) -> str:
    """``detokenize v1`` as pages and errors name a recorded normaliser."""
    return f"{name} v{version}" if version else name


def normaliser_mix_check(
    *, what: str, recorded: tuple[str, int], normaliser: TextNormaliser, holds_texts: bool
) -> None:
    """Refuse an import into ``what`` (``dataset 'x'``, ``repository 'y'``) with another normaliser
    than the one its texts were imported with: one collection in two styles is the shortcut the
    audit finds. An empty one takes any."""
    asked = (normaliser.name, normaliser.version)
    if holds_texts and tuple(recorded) != asked:
        raise UserError(
            f"{what} holds texts imported with normaliser {normaliser_label(*recorded)}; this import asks for "
            f"{normaliser_label(*asked)}, which would mix two styles of text in it. Import with --normalise "
            f"{recorded[0]}, or into a new one (nothing was imported)"
        )


def normaliser_report(normaliser: TextNormaliser, *, seen: int, changed: int) -> dict:
    """What an import reports of its normaliser: its name and version and, unless it is the identity,
    how many texts it was given and how many it changed."""
    report: dict = {"normaliser": normaliser.name, "normaliser_version": normaliser.version}
    if normaliser.changes_text:
        report.update(texts_seen=seen, texts_changed=changed)
    return report
