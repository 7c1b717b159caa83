"""How the malformed-file corpus is built: a case, the builders that derive its bytes from an
importer's valid file, and the bad bytes and texts the format tables share
(importers_cases_text.py, importers_cases_json.py)."""

import gzip
from collections.abc import Callable
from dataclasses import dataclass

Build = Callable[[list[str]], bytes]


@dataclass(frozen=True)
class Case:
    importer: str
    name: str
    build: Build  # the file's bytes, from the lines of the importer's valid file
    line: int | None = None  # the error names this line (item, for the ratings JSON), if given
    field: str | None = None  # ... and this field, if given
    skip: str | None = None  # or: the import succeeds and this report counter says 1
    suffix: str = ""  # added to the file name (".gz")

    @property
    def id(self) -> str:
        return f"{self.importer}:{self.name}"


def lines(base: list[str], eol: str = "\n") -> bytes:
    return "".join(line + eol for line in base).encode("utf-8")


def put(n: int, text: str) -> Build:
    """Line ``n`` (1-based) becomes ``text``."""
    return lambda base: lines([text if i == n else line for i, line in enumerate(base, 1)])


def swap(n: int, old: str, new: str | bytes) -> Build:
    """In line ``n``, ``old`` becomes ``new`` (raw bytes, for what UTF-8 text cannot hold)."""

    def build(base: list[str]) -> bytes:
        assert old in base[n - 1], (old, base[n - 1])
        encoded = [line.encode("utf-8") for line in base]
        raw = new if isinstance(new, bytes) else new.encode("utf-8")
        encoded[n - 1] = encoded[n - 1].replace(old.encode("utf-8"), raw, 1)
        return b"".join(line + b"\n" for line in encoded)

    return build


def append(text: str | bytes) -> Build:
    return lambda base: lines(base) + (text if isinstance(text, bytes) else text.encode("utf-8"))


def whole(data: bytes) -> Build:
    return lambda base: data


def cut_last_line(keep: int) -> Build:
    """The last line keeps ``keep`` characters and loses its newline (a cut download)."""
    return lambda base: lines(base[:-1]) + base[-1][:keep].encode("utf-8")


def encoded(codec: str, eol: str = "\n") -> Build:
    return lambda base: "".join(line + eol for line in base).encode(codec)


def half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def gzipped(build: Build) -> Build:
    return lambda base: gzip.compress(build(base))


NUL = "\x00"
LATIN1 = b"caf\xe9"
SURROGATE_BYTES = b"\xed\xa0\x80"  # U+D800 written as if it were a character (CESU-8 / WTF-8)
OVERLONG_SLASH = b"\xc0\xaf"  # "/" in two bytes: invalid UTF-8
TOO_LONG = "word " * 600  # 3,000 characters: over WELLCHOSEN_MAX_UTTERANCE_CHARS (2,000)
