"""clean_text, count_tokens and text_hash (core.text) of many lines at once, for imports of millions.

The lines of a block are joined by newlines and worked on as one array of bytes (numpy masks
instead of a dozen string operations per line), so that a line costs little more than its hash.

It takes the lines of ASCII text (but NUL, "<" and \\x1c-\\x1f), in UTF-8 also with the typographic
quotes, dashes and ellipsis of _PUNCTUATION (most of an English corpus). There the rules of
core.text reduce to bytes operations: ASCII whitespace is a single space, case folding is lower(),
NFKC changes no word, a word is a run of [0-9A-Za-z_] with single apostrophes inside, the curly
apostrophes (and "`") of a non-ASCII line are apostrophes in the normal form, and the spaces beside
an apostrophe go before its words are found. Other lines are left to the caller (None). The
results are the functions' own: tests compare them on generated text.
"""

import hashlib

import numpy as np

from core.text import text_hash

_SPACE, _NEWLINE, _APOSTROPHE, _BACKTICK = 32, 10, 39, 96
# Bytes outside a plain line: non-ASCII, NUL, "<" (formatting tags) and \x1c-\x1f (whitespace to
# str.split but not to bytes.split).
_NOT_PLAIN = np.zeros(256, bool)
_NOT_PLAIN[[0, 0x1C, 0x1D, 0x1E, 0x1F, ord("<"), *range(128, 256)]] = True
# UTF-8 E2 80 xx of ‘ ’ “ ” – — …: no word character, whatever NFKC and casefold make of them
_PUNCTUATION = np.zeros(256, bool)
_PUNCTUATION[[0x98, 0x99, 0x9C, 0x9D, 0x93, 0x94, 0xA6]] = True
_CURLY_APOSTROPHE = np.zeros(256, bool)  # ‘ ’: core.text._APOSTROPHES makes them apostrophes
_CURLY_APOSTROPHE[[0x98, 0x99]] = True
_SPACES = bytes.maketrans(b"\t\x0b\x0c\r", b"    ")
# Bytes outside a word become spaces; apostrophes stay, and lines stay apart.
_NON_WORD = bytes(c if chr(c).isalnum() and c < 128 or c in b"_'\n" else _SPACE for c in range(256))


def clean_texts_tokens_and_hashes(
    lines: list[bytes | None], *, utf8: bool
) -> tuple[list[str | None], list[int | None], list[str | None]]:
    """``clean_text``, ``count_tokens`` and ``text_hash`` of each line it takes (see above; the
    typographic punctuation only when ``utf8``), None for the others (and for None lines)."""
    if not lines:
        return [], [], []
    present = [line or b"" for line in lines]
    block = _framed(present)
    taken = _taken(block, utf8=utf8)
    for i, line in enumerate(lines):
        if line is None:
            taken[i] = False
    if taken.all():
        return _clean_texts_tokens_and_hashes(block)
    if not taken.any():
        return [None] * len(lines), [None] * len(lines), [None] * len(lines)
    texts, tokens, hashes = _clean_texts_tokens_and_hashes(
        _framed([line for line, take in zip(present, taken, strict=True) if take])
    )
    at = np.cumsum(taken) - 1  # the position of a taken line among the taken ones
    return (
        [texts[i] if take else None for i, take in zip(at, taken, strict=True)],
        [tokens[i] if take else None for i, take in zip(at, taken, strict=True)],
        [hashes[i] if take else None for i, take in zip(at, taken, strict=True)],
    )


def _framed(lines: list[bytes]) -> np.ndarray:
    return np.frombuffer(b"\n" + b"\n".join(lines) + b"\n", np.uint8)


def _line_of(block: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The (0-based) line of each byte position of a framed block."""
    return np.searchsorted(np.flatnonzero(block == _NEWLINE), positions) - 1


def _taken(block: np.ndarray, *, utf8: bool) -> np.ndarray:
    n_lines = int(np.count_nonzero(block == _NEWLINE)) - 1
    bad = _NOT_PLAIN[block]
    if utf8:
        at = np.flatnonzero((block[:-2] == 0xE2) & (block[1:-1] == 0x80) & _PUNCTUATION[block[2:]])
        bad[at] = bad[at + 1] = bad[at + 2] = False
    taken = np.ones(n_lines, bool)
    taken[_line_of(block, np.flatnonzero(bad))] = False
    return taken


def _clean_texts_tokens_and_hashes(block: np.ndarray) -> tuple[list[str], list[int], list[str]]:
    cleaned = _single_spaces(np.frombuffer(block.tobytes().translate(_SPACES), np.uint8))
    texts = cleaned.tobytes().decode("utf-8").split("\n")[1:-1]
    folded = np.frombuffer(cleaned.tobytes().lower(), np.uint8)
    counted = _lines(_words(folded))
    normal_form = _apostrophes(folded)
    # normalize_text rejoins spaced apostrophes ("don ' t") before it finds words; count_tokens does not
    spaced = _beside_apostrophe(normal_form)
    normal = _lines(_words(normal_form[~spaced])) if spaced.any() or normal_form is not folded else counted
    tokens = [words.count(b" ") + 1 if words else 0 for words in counted]
    blake2b = hashlib.blake2b
    hashes = [
        blake2b(words, digest_size=16).hexdigest() if words else text_hash(text)
        for words, text in zip(normal, texts, strict=True)
    ]
    return texts, tokens, hashes


def _lines(block: np.ndarray) -> list[bytes]:
    return block.tobytes().split(b"\n")[1:-1]


def _single_spaces(block: np.ndarray) -> np.ndarray:
    """Runs of spaces as one space, none at a line's ends (``block`` starts and ends with a newline)."""
    space = block == _SPACE
    after_gap = np.empty_like(space)  # the previous byte is a space or a newline
    after_gap[0] = True
    np.logical_or(space[:-1], block[:-1] == _NEWLINE, out=after_gap[1:])
    block = block[~(space & after_gap)]
    space = block == _SPACE
    before_newline = np.empty_like(space)
    before_newline[-1] = True
    np.equal(block[1:], _NEWLINE, out=before_newline[:-1])
    return block[~(space & before_newline)]


def _apostrophes(folded: np.ndarray) -> np.ndarray:
    """What normalize_text's NFKC and apostrophe table make of the lines holding non-ASCII
    characters: ‘ and ’ become "'", and so does "`" (``folded`` itself when nothing changes)."""
    wide = np.flatnonzero(folded >= 0x80)
    if not len(wide):
        return folded
    block = folded.copy()
    backticks = np.flatnonzero(block == _BACKTICK)
    if len(backticks):
        non_ascii_lines = np.unique(_line_of(block, wide))
        in_non_ascii = np.isin(_line_of(block, backticks), non_ascii_lines)
        block[backticks[in_non_ascii]] = _APOSTROPHE
    at = np.flatnonzero((block[:-2] == 0xE2) & (block[1:-1] == 0x80) & _CURLY_APOSTROPHE[block[2:]])
    if not len(at):
        return block
    block[at] = _APOSTROPHE
    keep = np.ones(len(block), bool)
    keep[at + 1] = keep[at + 2] = False
    return block[keep]


def _beside_apostrophe(block: np.ndarray) -> np.ndarray:
    """The spaces next to an apostrophe."""
    apostrophe = block == _APOSTROPHE
    near = np.zeros_like(apostrophe)
    near[1:] |= apostrophe[:-1]
    near[:-1] |= apostrophe[1:]
    return near & (block == _SPACE)


def _words(folded: np.ndarray) -> np.ndarray:
    """Each line's words (core.text._WORD) joined by single spaces."""
    block = np.frombuffer(folded.tobytes().translate(_NON_WORD), np.uint8).copy()
    apostrophe = block == _APOSTROPHE
    if apostrophe.any():
        # an apostrophe joins two words only with a word character on both sides
        word = (block != _SPACE) & (block != _NEWLINE) & ~apostrophe
        joins = np.zeros_like(apostrophe)
        joins[1:-1] = word[:-2] & word[2:]
        block[apostrophe & ~joins] = _SPACE
    return _single_spaces(block)
