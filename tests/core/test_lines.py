import gzip
import tracemalloc

import pytest

from core.errors import ImportFileError
from core.lines import LineReader, decode_field


def test_bom_and_crlf_are_removed(write_file):
    # given a file with a UTF-8 BOM and Windows line endings
    path = write_file("a.txt", b"\xef\xbb\xbfhello\r\nworld\r\n")
    # when it is read
    lines = list(LineReader(path, max_bytes=100))
    # then neither the BOM nor the carriage returns are part of the data
    assert [line.data for line in lines] == [b"hello", b"world"]
    assert all(line.terminated for line in lines)


def test_last_line_without_newline_is_flagged_unterminated(write_file):
    path = write_file("a.txt", b"one\ntwo")
    lines = list(LineReader(path, max_bytes=100))
    assert [(line.data, line.terminated) for line in lines] == [(b"one", True), (b"two", False)]


def test_gzip_files_are_read_transparently(tmp_path):
    path = tmp_path / "a.txt.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(b"one\ntwo\n")
    assert [line.data for line in LineReader(path, max_bytes=100)] == [b"one", b"two"]


def test_corrupt_gzip_is_a_clear_error(write_file):
    path = write_file("a.txt.gz", b"\x1f\x8bnot really gzip")
    with pytest.raises(ImportFileError, match="not a readable gzip file"):
        list(LineReader(path, max_bytes=100))


def test_over_long_line_is_skipped_in_bounded_memory(tmp_path):
    # given a 20 MB line between two short ones
    path = tmp_path / "long.txt"
    with open(path, "wb") as handle:
        handle.write(b"short\n" + b"x" * 20_000_000 + b"\nafter\n")
    # when it is read with a 1 kB limit
    tracemalloc.start()
    lines = list(LineReader(path, max_bytes=1000))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # then the long line is reported as too long, the next line is intact, and the
    # reader never held the long line in memory
    assert [(line.number, line.too_long, line.data) for line in lines] == [
        (1, False, b"short"),
        (2, True, b""),
        (3, False, b"after"),
    ]
    assert peak < 5_000_000


def test_undecodable_bytes_name_the_file_line_and_field():
    with pytest.raises(ImportFileError) as error:
        decode_field(b"caf\xe9", path="/data/x.tsv", line=7, field="ground truth")
    message = str(error.value)
    assert "x.tsv" in message and "line 7" in message and "field ground truth" in message
    assert "undecodable" in message
