"""Streaming line reader for imports: bounded memory, whatever the file looks like.

Real corpora have a UTF-8 BOM, CRLF endings, gzip, a last line cut mid-utterance and the
occasional multi-megabyte line; none of those may crash an import or exhaust memory.
Lines are yielded as bytes so that each parser decodes field by field and can say which
field holds undecodable bytes.
"""

import codecs
import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.errors import ImportFileError

_BOM = codecs.BOM_UTF8
_READ_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class RawLine:
    number: int  # 1-based
    data: bytes  # without the line terminator (and without a leading BOM); b"" if too long
    terminated: bool  # False for a last line without a newline: possibly cut off
    too_long: bool  # longer than the reader's limit; data is then empty


class LineReader:
    """Iterates over the lines of a (possibly gzipped) file and reports how far it got."""

    def __init__(self, path: Path | str, *, max_bytes: int) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.size = self.path.stat().st_size
        self._raw = None

    def position(self) -> int:
        """Bytes of the file on disk consumed so far (compressed bytes for .gz)."""
        return self._raw.tell() if self._raw is not None and not self._raw.closed else self.size

    def __iter__(self) -> Iterator[RawLine]:
        with open(self.path, "rb") as raw:
            self._raw = raw
            stream = gzip.GzipFile(fileobj=raw, mode="rb") if _is_gzip(self.path, raw) else raw
            try:
                yield from self._lines(stream)
            except (gzip.BadGzipFile, EOFError) as exc:
                raise ImportFileError(self.path, None, None, f"not a readable gzip file: {exc}") from None

    def _lines(self, stream) -> Iterator[RawLine]:
        number = 0
        while True:
            data = stream.readline(self.max_bytes + 2)
            if not data:
                return
            number += 1
            if number == 1 and data.startswith(_BOM):
                data = data[len(_BOM) :]
            terminated = data.endswith(b"\n")
            too_long = False
            if not terminated and len(data) >= self.max_bytes + 2:
                # Skip the rest of an over-long line in bounded chunks.
                too_long = True
                while True:
                    chunk = stream.readline(_READ_CHUNK)
                    if not chunk or chunk.endswith(b"\n"):
                        terminated = bool(chunk)
                        break
                data = b""
            else:
                data = data.rstrip(b"\n").rstrip(b"\r")
                if len(data) > self.max_bytes:
                    too_long, data = True, b""
            yield RawLine(number=number, data=data, terminated=terminated, too_long=too_long)


def _is_gzip(path: Path, raw) -> bool:
    magic = raw.read(2)
    raw.seek(0)
    return magic == b"\x1f\x8b" or path.suffix == ".gz"


def decode_field(data: bytes, *, path: Path | str, line: int, field: str, encoding: str = "utf-8") -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 8]
        raise ImportFileError(
            path, line, field, f"undecodable bytes {bad!r} at byte {exc.start} (file is not {encoding})"
        ) from None


def parse_json_line(data: bytes, *, path: Path | str, line: int, encoding: str = "utf-8"):
    text = decode_field(data, path=path, line=line, field="(line)", encoding=encoding)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFileError(path, line, f"(JSON, column {exc.colno})", f"invalid JSON: {exc.msg}") from None
