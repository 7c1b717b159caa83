"""Text normalisation shared by imports, de-duplication and retrieval.

Two utterances are "the same" when they differ only in case, Unicode form, spacing or
punctuation: DailyDialog is tokenised ("Say , Jim , how about ... ?") while subtitles are
not ("Say, Jim, how about...?"), and both must meet in one repository.
"""

import hashlib
import re
import unicodedata

_WORD = re.compile(r"\w+(?:'\w+)*", re.UNICODE)
_SPACES = re.compile(r"\s+")
_SPACED_APOSTROPHE = re.compile(r"\s*'\s*")
# Subtitle and screenplay files carry presentation tags; they are not content.
_FORMATTING_TAG = re.compile(r"</?(?:i|b|u|em|strong|font)(?:\s[^<>]{0,200})?>", re.IGNORECASE)
# The tokenised style of corpora such as DailyDialog: a space before punctuation ("Hi , how are you ?")
# and clitics split from their word ("I 'm", "do n't"). What a context-free classifier tells a
# tokenised ground truth from subtitle lines by.
SPACED_PUNCTUATION = re.compile(r" [,.!?;:]")
# A clitic with a space before or after its apostrophe, straight or curly ("I 'm", "I ’ m",
# "don ' t", "do n't"); "I'm" is not split.
SPLIT_CLITIC = re.compile(r"(?:\w ['\u2019] ?|\w['\u2019] )(?:m|s|re|ve|ll|d|t)\b| n['\u2019]t\b", re.IGNORECASE)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})


def normalize_text(text: str) -> str:
    """Canonical form used for hashing: case-folded words joined by single spaces.

    A text with no word characters at all ("...", "?!") keeps its punctuation so that it
    still has a distinct, non-empty normal form.
    """
    if "<" in text:
        text = strip_formatting_tags(text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)
    folded = text.casefold()
    if "'" in folded:
        # Tokenised corpora split contractions ("I ' ll", "don ' t"); rejoin them first.
        folded = _SPACED_APOSTROPHE.sub("'", folded)
    words = _WORD.findall(folded)
    if words:
        return " ".join(words)
    return " ".join(folded.split())


def text_hash(text: str) -> str:
    """32 hex characters identifying the normalised text (unique per repository / question)."""
    return hashlib.blake2b(normalize_text(text).encode("utf-8"), digest_size=16).hexdigest()


def count_tokens(text: str) -> int:
    return len(_WORD.findall(text))


def strip_formatting_tags(text: str) -> str:
    if "<" not in text:
        return text
    return clean_text(_FORMATTING_TAG.sub("", text))


def clean_text(text: str) -> str:
    """Whitespace-normalised text as stored and shown (content is never altered otherwise)."""
    return " ".join(text.split())


def unstorable_character(text: str) -> str | None:
    """Why ``text`` cannot be stored as written (a NUL character or a lone surrogate), or None.

    PostgreSQL cannot store U+0000 in text (SQLite can), and a lone surrogate (what a JSON "\\ud800"
    escape without its pair decodes to) is not text at all: neither database can store it as UTF-8.

    Imports refuse such text rather than alter it: research text is stored as the file has it, and
    both databases then hold the same thing.
    """
    # Cheap tests first: this runs on every field of every imported line.
    if "\x00" in text:
        return (
            f"holds a NUL character (U+0000) at character {text.index(chr(0)) + 1}; such text is refused "
            "(PostgreSQL cannot store it)"
        )
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"holds a lone surrogate (U+{ord(text[error.start]):04X}) at character {error.start + 1}, which is not "
            "a Unicode character (a JSON \\u escape without its pair?)"
        )
    return None


def tokenised_style(text: str) -> bool:
    """Whether ``text`` is written in a tokenised corpus's style (see SPACED_PUNCTUATION)."""
    return bool(SPACED_PUNCTUATION.search(text) or SPLIT_CLITIC.search(text))
