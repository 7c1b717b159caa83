import gzip
import re
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import ImportFileError, UserError
from core.json_lines import parse_json_line
from core.lines import LineReader, csv_rows, decode_field, encoding_check


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


def test_a_json_line_nested_200k_deep_is_an_error_naming_file_and_line():
    with pytest.raises(ImportFileError, match=r"^d.jsonl, line 4: is nested too deeply \(the limit is 32 levels\)"):
        parse_json_line(b"[" * 200_000, path="/data/d.jsonl", line=4)


def test_a_lone_surrogate_in_json_is_an_error_naming_file_line_and_field():
    data = b'{"context": ["Hi.", "\\ud800"], "response": "Yes."}'
    with pytest.raises(
        ImportFileError, match=r"^d.jsonl, line 2, field context\[1\]: holds a lone surrogate \(U\+D800\)"
    ):
        parse_json_line(data, path="/data/d.jsonl", line=2)


def test_a_nul_escape_in_json_is_an_error_naming_the_field():
    with pytest.raises(
        ImportFileError, match=r"line 2, field response: holds a NUL character \(U\+0000\) at character 3"
    ):
        parse_json_line(b'{"response": "Ye\\u0000s."}', path="d.jsonl", line=2)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"a": 1, "a": 2}', "field a: appears twice in one object"),
        (b"[1, NaN]", "holds NaN, which is not a JSON number"),
        (b"[Infinity]", "holds Infinity, which is not a JSON number"),
        (b"9" * 5000, "holds a value that cannot be read"),
        (b'{"x": ' + b"[" * 40 + b"]" * 40 + b"}", "field x: is nested too deeply"),
        (b'{"unknown": 1e999999}', "field unknown: is a number too large for a float"),
        (b'{"a": {"b": [0.5, -1e999999]}}', "field a.b[1]: is a number too large for a float"),
        (b"1e400", "line 1: is a number too large for a float"),
    ],
)
def test_json_lines_are_read_strictly(data, message):
    with pytest.raises(ImportFileError, match=re.escape(message)):
        parse_json_line(data, path="d.jsonl", line=1)


def test_a_valid_pair_of_surrogate_escapes_is_one_character():
    assert parse_json_line(b'["\\ud83d\\ude00"]', path="d.jsonl", line=1) == ["\U0001f600"]


def test_a_nul_byte_in_a_field_is_an_error_naming_file_line_and_field():
    with pytest.raises(ImportFileError, match=r"^x.tsv, line 7, field candidate 2: holds a NUL character"):
        decode_field(b"two\x00words", path="/data/x.tsv", line=7, field="candidate 2")


def test_a_field_of_nul_separated_bytes_is_called_utf_16():
    with pytest.raises(ImportFileError, match="looks like UTF-16; convert it to UTF-8"):
        decode_field("Hello.".encode("utf-16-le"), path="x.txt", line=1, field="text")


def test_a_utf_16_file_is_refused_at_line_1(write_file):
    path = write_file("a.txt", "hello\nworld\n".encode("utf-16"))
    with pytest.raises(ImportFileError, match=r"a.txt, line 1: the file is UTF-16 or UTF-32"):
        list(LineReader(path, max_bytes=100))


def test_a_file_with_carriage_returns_alone_is_refused(write_file):
    path = write_file("a.txt", b"hello\rworld\r")
    with pytest.raises(ImportFileError, match=r"a.txt, line 1: lines end with a carriage return alone"):
        list(LineReader(path, max_bytes=100))


def test_a_gzip_file_with_a_corrupt_block_is_a_clear_error(write_file):
    path = write_file("a.txt.gz", b"\x1f\x8b\x08\x00" + bytes(range(200, 256)))
    with pytest.raises(ImportFileError, match="not a readable gzip file"):
        list(LineReader(path, max_bytes=100))


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1", "cp1252", "utf-8-sig"])
def test_ascii_compatible_encodings_are_accepted(encoding):
    assert encoding_check(encoding=encoding) == encoding


@pytest.mark.parametrize(
    ("encoding", "message"),
    [
        ("klingon", "unknown text encoding"),
        ("utf-16", "not supported"),
        ("cp500", "not supported"),
        ("rot13", "unknown text encoding"),
    ],
)
def test_encodings_the_reader_cannot_split_are_refused(encoding, message):
    with pytest.raises(UserError, match=message):
        encoding_check(encoding=encoding)


def test_csv_rows_give_the_line_each_record_starts_on(write_file):
    path = write_file("a.csv", b'\xef\xbb\xbfid,note\r\n1,"two\r\nlines"\r\n2,x\r\n')
    assert list(csv_rows(path)) == [(1, ["id", "note"]), (2, ["1", "two\r\nlines"]), (4, ["2", "x"])]


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        (b'id,note\n1,"open\n', 2, "not valid CSV: unexpected end of data"),
        (b"id,note\n1,ok\n2,caf\xe9\n", 3, "undecodable bytes"),
        (b"id,note\n1," + b"x" * 200_000 + b"\n", 2, "not valid CSV: field larger than field limit"),
    ],
)
def test_csv_rows_errors_name_the_line(write_file, content, line, message):
    with pytest.raises(ImportFileError, match=rf"a.csv, line {line}: {message}"):
        list(csv_rows(write_file("a.csv", content)))


def test_a_stray_carriage_return_in_an_over_long_first_line_is_left_to_the_length_rule(write_file):
    path = write_file("a.txt", b"x" * 50 + b"\r" + b"x" * 100 + b"\nshort\n")
    assert [(line.too_long, line.data) for line in LineReader(path, max_bytes=100)] == [(True, b""), (False, b"short")]


def test_the_reader_counts_lines_and_estimates_the_files_lines_from_the_bytes_read(tmp_path):
    # given a file of 2,000 equal lines, read by a reader that has just read the 100th
    path = tmp_path / "u.txt"
    path.write_bytes(b"".join(b"utterance %04d\n" % i for i in range(2000)))
    reader = LineReader(path, max_bytes=1000)
    lines = iter(reader)
    for _ in range(100):
        next(lines)
    # then the estimate is near 2,000 (buffered reads run ahead), never below the lines read
    assert reader.lines_read == 100 and not reader.finished
    assert 100 <= reader.lines_estimate() <= 2000
    # and exact at the end
    list(lines)
    assert (reader.lines_read, reader.lines_estimate(), reader.finished) == (2000, 2000, True)


def test_the_reader_reports_lines_to_a_jobs_progress_marked_estimated_until_the_end(tmp_path):
    class Progress:
        def __init__(self):
            self.calls = []

        def update(self, **values):
            self.calls.append(values)

    path = tmp_path / "u.txt"
    path.write_bytes(b"a\nb\nc\n")
    reader, progress = LineReader(path, max_bytes=10), Progress()
    for _ in reader:
        reader.report(progress)
    reader.report(progress, force=True)
    assert progress.calls[-1] == {
        "done": 3,
        "total": 3,
        "phase": "reading the file",
        "unit": "lines",
        "estimated": False,
        "force": True,
    }
    assert all(call["unit"] == "lines" for call in progress.calls)


# Pieces of files that exercise the reader's rules: line ends of every kind, a BOM, long runs
pieces = st.sampled_from([b"\n", b"\r\n", b"\r", b"\r\r\n", b"\xef\xbb\xbf", b"ab", b" ", b"x" * 7, b"y" * 13])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(pieces, max_size=40), size=st.integers(min_value=1, max_value=32), gz=st.booleans())
def test_blocks_give_the_lines_of_iteration_whatever_the_file_and_block_size(tmp_path_factory, parts, size, gz):
    # given any file (over-long lines, CRs, a cut last line), plain or gzipped
    path = tmp_path_factory.mktemp("blocks") / ("f.txt.gz" if gz else "f.txt")
    content = b"".join(parts)
    path.write_bytes(gzip.compress(content) if gz else content)
    try:
        expected = [
            (line.number, None if line.too_long else line.data, line.terminated)
            for line in LineReader(path, max_bytes=10)
        ]
    except ImportFileError as error:
        # then a file iteration refuses, blocks refuse too, with the same message
        with pytest.raises(ImportFileError, match=re.escape(error.message)):
            list(LineReader(path, max_bytes=10).blocks(size=size))
        return
    # when it is read in blocks of a few bytes
    reader = LineReader(path, max_bytes=10)
    got = [
        (block.start + i, data, block.terminated or i < len(block.lines) - 1)
        for block in reader.blocks(size=size)
        for i, data in enumerate(block.lines)
    ]
    # then the blocks hold the same lines, numbers and cut last line, and the count is the file's
    assert got == expected
    assert (reader.lines_read, reader.finished) == (len(expected), True)


def test_blocks_skip_an_over_long_line_in_bounded_memory(tmp_path):
    # given a 20 MB line between two short ones
    path = tmp_path / "long.txt"
    path.write_bytes(b"short\n" + b"x" * 20_000_000 + b"\nafter\n")
    # when it is read in blocks with a 1 kB limit
    tracemalloc.start()
    lines = [line for block in LineReader(path, max_bytes=1000).blocks() for line in block.lines]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # then the long line is None and never held whole
    assert lines == [b"short", None, b"after"]
    assert peak < 5_000_000


def test_a_reader_follows_another_processs_counts_for_its_reports(tmp_path):
    # given a reader of a 1,000-byte file told that another reader read 10 lines in 100 bytes
    path = tmp_path / "u.txt"
    path.write_bytes(b"123456789\n" * 100)
    reader = LineReader(path, max_bytes=100)
    reader.follow(lines_read=10, position=100, finished=False)
    # then it estimates the file's lines from those counts
    assert (reader.lines_read, reader.lines_estimate()) == (10, 100)
