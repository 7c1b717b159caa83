"""Streaming line reader for imports: bounded memory, whatever the file looks like.

Real corpora have a UTF-8 BOM, CRLF endings, gzip, a last line cut mid-utterance and the
occasional multi-megabyte line; none of those may crash an import or exhaust memory.
Lines are yielded as bytes so that each parser decodes field by field and can say which
field holds undecodable bytes. Every decoded field (and every string of a JSON line, read by
core.json_lines) passes the one text rule of core.text.unstorable_character: a NUL character or a
lone surrogate is an error naming file, line and field, never stored (PostgreSQL refuses NUL where
SQLite would keep it).
"""

import codecs
import csv
import gzip
import io
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core.errors import ImportFileError, UserError
from core.text import unstorable_character

_BOM = codecs.BOM_UTF8
# UTF-16 and UTF-32 byte order marks (UTF-32 LE starts like UTF-16 LE)
_WIDE_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE)
_READ_CHUNK = 1 << 20
# LineReader.blocks: small enough that a block's lines weigh little beside an import's batch
_BLOCK_BYTES = 1 << 16
_REPORT_SECONDS = 0.25
# Lines are split on the byte "\n" and fields on ASCII separators: the encoding must write ASCII
# as ASCII (utf-8, latin-1, cp1252... do; utf-16, utf-32 and EBCDIC do not).
_ASCII_PROBE = "\t\n\r ,+$_:[]{}\"'azAZ09"


@dataclass(frozen=True, slots=True)
class RawLine:
    number: int  # 1-based
    data: bytes  # without the line terminator (and without a leading BOM); b"" if too long
    terminated: bool  # False for a last line without a newline: possibly cut off
    too_long: bool  # longer than the reader's limit; data is then empty


@dataclass(frozen=True, slots=True)
class LineBlock:
    """Consecutive lines of a file (LineReader.blocks)."""

    start: int  # number of the first line (1-based)
    lines: list  # bytes as RawLine.data has them; None for an over-long line
    terminated: bool  # False when the last line is the file's last and lacks its newline


class LineReader:
    """Iterates over the lines of a (possibly gzipped) file and reports how far it got."""

    def __init__(self, path: Path | str, *, max_bytes: int) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.size = self.path.stat().st_size
        self.lines_read = 0
        self.finished = False  # every line was read: lines_read is the file's count
        self._raw = None
        self._followed: int | None = None  # position of a reader followed (follow)
        self._reported = time.monotonic()  # last forced report

    def position(self) -> int:
        """Bytes of the file on disk consumed so far (compressed bytes for .gz)."""
        if self._followed is not None:
            return self._followed
        return self._raw.tell() if self._raw is not None and not self._raw.closed else self.size

    def follow(self, *, lines_read: int, position: int, finished: bool) -> None:
        """Take the counts of a reader of this file in another process, for ``report``."""
        self.lines_read, self._followed, self.finished = lines_read, position, finished

    def lines_estimate(self) -> int:
        """The file's lines: exact once read to the end, before that estimated from the lines read
        per byte so far (0 before the first line)."""
        if self.finished:
            return self.lines_read
        position = self.position()
        if not self.lines_read or not position:
            return 0
        return max(self.lines_read, round(self.lines_read * self.size / position))

    def report(self, progress, *, phase: str = "reading the file", force: bool = False) -> None:
        """Tell a job's progress (core.services.jobs.JobProgress) the lines read and the file's
        lines (estimated from its bytes until the end): at least every _REPORT_SECONDS, more
        often than JobProgress's own pace, so that an import of a second still shows (and can be
        stopped at) its middle. Imports run in a transaction: their reports go to the cache only."""
        now = time.monotonic()
        force = force or now - self._reported >= _REPORT_SECONDS
        if force:
            self._reported = now
        progress.update(
            done=self.lines_read,
            total=self.lines_estimate(),
            phase=phase,
            unit="lines",
            estimated=not self.finished,
            force=force,
        )

    def __iter__(self) -> Iterator[RawLine]:
        with self._stream() as stream:
            for line in self._lines(stream):
                self.lines_read = line.number
                yield line
            self.finished = True

    def blocks(self, *, size: int = _BLOCK_BYTES) -> Iterator["LineBlock"]:
        """The same lines as iterating, in blocks of about ``size`` bytes: no object per line, for
        imports of millions of lines. The first line is read as iterating reads it (its checks)."""
        with self._stream() as stream:
            lines = self._lines(stream)
            first = next(lines, None)
            if first is not None:
                self.lines_read = 1
                yield LineBlock(1, [None if first.too_long else first.data], first.terminated)
                yield from self._blocks(stream, size)
            self.finished = True

    @contextmanager
    def _stream(self):
        with open(self.path, "rb") as raw:
            self._raw = raw
            stream = gzip.GzipFile(fileobj=raw, mode="rb") if _is_gzip(self.path, raw) else raw
            try:
                yield stream
            except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
                raise ImportFileError(self.path, None, None, f"not a readable gzip file: {exc}") from None

    def _blocks(self, stream, size: int) -> Iterator["LineBlock"]:
        """Lines 2... (after the first line and its newline) split from chunks of ``size`` bytes;
        an over-long line is dropped as it streams by, so memory stays within a chunk and a line."""
        limit = self.max_bytes + 1  # a longer line (newline excluded) is over-long, whatever its CRs
        number = self.lines_read
        pending = b""  # the start of a line continued in the next chunk
        skipping = False  # inside an over-long line
        while chunk := stream.read(size):
            parts: list = chunk.split(b"\n")
            tail = parts.pop()
            if not parts:  # no line ends in this chunk
                if not skipping:
                    pending += tail
                    skipping = len(pending) > limit
                    pending = b"" if skipping else pending
                continue
            parts[0] = None if skipping else pending + parts[0]
            skipping = len(tail) > limit
            pending = b"" if skipping else tail
            if parts[0] is None or b"\r" in chunk or b"\r" in parts[0] or max(map(len, parts)) > self.max_bytes:
                parts = [self._data(part) for part in parts]
            yield LineBlock(number + 1, parts, True)
            number += len(parts)
            self.lines_read = number
        if pending or skipping:
            self.lines_read = number + 1
            yield LineBlock(number + 1, [None if skipping else self._data(pending)], False)

    def _data(self, part: bytes | None) -> bytes | None:
        """A line as iterating gives it: without trailing CRs, or None when over-long (as its
        ``readline`` of max_bytes + 2 bytes decides)."""
        if part is None or len(part) > self.max_bytes + 1:
            return None
        data = part.rstrip(b"\r")
        return None if len(data) > self.max_bytes else data

    def _lines(self, stream) -> Iterator[RawLine]:
        number = 0
        while True:
            data = stream.readline(self.max_bytes + 2)
            if not data:
                return
            number += 1
            if number == 1:
                data = self._first_line(data)
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

    def _first_line(self, data: bytes) -> bytes:
        """The first line without its UTF-8 BOM; files this reader would misread are refused."""
        if data.startswith(_WIDE_BOMS):
            raise ImportFileError(
                self.path,
                1,
                None,
                "the file is UTF-16 or UTF-32 (it starts with their byte order mark); convert it to UTF-8",
            )
        body = data.rstrip(b"\r")
        whole_file = len(data) < self.max_bytes + 2
        if not data.endswith(b"\n") and b"\r" in body and (whole_file or body.count(b"\r") > 1):
            # One "line" holding carriage returns: every record of the file would run together.
            # (A single stray CR in an over-long first line is left to the over-long rule.)
            raise ImportFileError(
                self.path,
                1,
                None,
                "lines end with a carriage return alone (classic Mac OS line ends); convert them to \\n or \\r\\n",
            )
        return data[len(_BOM) :] if data.startswith(_BOM) else data


def _is_gzip(path: Path, raw) -> bool:
    magic = raw.read(2)
    raw.seek(0)
    return magic == b"\x1f\x8b" or path.suffix == ".gz"


def encoding_check(*, encoding: str) -> str:
    """The encoding, if files in it can be read line by line; else an error saying why."""
    try:
        probe = _ASCII_PROBE.encode(encoding).removeprefix(_BOM)  # utf-8-sig writes a BOM first
    except LookupError:
        raise UserError(f"unknown text encoding {encoding!r} (e.g. utf-8, latin-1, cp1252)") from None
    except UnicodeError:
        probe = None
    if probe != _ASCII_PROBE.encode("ascii"):
        raise UserError(
            f"encoding {encoding!r} is not supported: files are read line by line, which needs an encoding that "
            "writes ASCII as ASCII (utf-8, latin-1, cp1252...); convert the file to UTF-8"
        )
    return encoding


def text_field_check(text: str, *, path: Path | str, line: int | None, field: str | None) -> str:
    """``text`` if it can be stored as written; else an error naming file, line and field."""
    problem = unstorable_character(text)
    if problem:
        raise ImportFileError(path, line, field, problem)
    return text


def decode_field(
    data: bytes, *, path: Path | str, line: int, field: str, encoding: str = "utf-8", check: bool = True
) -> str:
    """The field's text; undecodable bytes, and (unless ``check`` is False because the caller checks
    the parts it splits the text into) NUL characters, are errors naming file, line and field."""
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 8]
        raise ImportFileError(
            path, line, field, f"undecodable bytes {bad!r} at byte {exc.start} (file is not {encoding})"
        ) from None
    if check and b"\0" in data and data.count(0) * 3 >= len(data):
        # ASCII text written as UTF-16 without a byte order mark: every other byte is NUL
        raise ImportFileError(path, line, field, "holds NUL bytes: the file looks like UTF-16; convert it to UTF-8")
    return text_field_check(text, path=path, line=line, field=field) if check else text


def csv_rows(
    path: Path | str, *, encoding: str = "utf-8", max_bytes: int = 16 << 20
) -> Iterator[tuple[int, list[str]]]:
    """``(line, row)`` for each record of a small CSV file (read whole; a quoted field may span
    lines, and ``line`` is where its record starts). Errors name file and line; the caller checks
    each cell with text_field_check, since it knows the columns' names."""
    path = Path(path)
    size = path.stat().st_size
    if size > max_bytes:
        raise ImportFileError(path, None, None, f"is {size:,} bytes; the limit for this file is {max_bytes:,}")
    data = path.read_bytes()
    if data.startswith(_WIDE_BOMS):
        raise ImportFileError(
            path, 1, None, "the file is UTF-16 or UTF-32 (it starts with their byte order mark); convert it to UTF-8"
        )
    data = data[len(_BOM) :] if data.startswith(_BOM) else data
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 8]
        line = data.count(b"\n", 0, exc.start) + 1
        raise ImportFileError(path, line, None, f"undecodable bytes {bad!r} (file is not {encoding})") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise ImportFileError(path, start, None, f"not valid CSV: {exc}") from None
        yield start, row
