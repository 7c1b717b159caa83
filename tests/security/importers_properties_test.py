"""Property tests of the line readers and per-format line parsers: whatever bytes or text come in,
the only exception is the project's clear error (ImportFileError, UserError, or HumanRatingsError
for the ratings JSON), and valid input comes back as it was written."""

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.services.dialogue_import import _parse_dailydialog, _parse_jsonl
from annotation.services.score_import import _header, _parse_row, _split
from core.errors import UserError
from core.json_lines import parse_json_line
from core.lines import LineReader, RawLine, csv_rows, decode_field
from core.text import clean_text
from evaluation.human import HumanRatingsError, read_zhao
from retrieval.services.repository_import import FORMATS, _utterances
from testsets.formats.hf.records import FIELDS as HF_FIELDS
from testsets.formats.hf.records import _parse as _parse_hf
from testsets.formats.tsv import TSVShape as _Shape
from testsets.formats.tsv import scores_line_next as _next_scores
from testsets.formats.tsv import tsv_line_parse as _parse_tsv_line

# Fresh files per example in one temporary folder; no database is touched.
PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
PATH = Path("corpus.txt")
CLEAN_ERRORS = (UserError,)  # ImportFileError is a UserError

# Text a file may hold: any character but NUL and lone surrogates.
stored_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=80)
# Bytes that look like a file's: lines, separators, BOMs, NULs and invalid UTF-8 mixed in.
file_pieces = st.sampled_from(
    [b"\n", b"\r\n", b"\r", b"\t", b",", b'"', b"__eou__", b" +++$+++ ", b"\xef\xbb\xbf", b"\xff\xfe", b"\x00", b"\xe9"]
    + [b"{", b"}", b"[", b"]", b":", b'"a"', b"\\u0000", b"\\ud800", b"1", b"NaN", b"hello", b" "]
)
file_bytes = st.one_of(st.binary(max_size=400), st.lists(file_pieces, max_size=60).map(b"".join))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | stored_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(stored_text, children, max_size=4),
    max_leaves=20,
)
utterance = stored_text.filter(lambda t: "__eou__" not in t and clean_text(t) and "\n" not in t and "\r" not in t)


def raw_line(data: bytes, terminated: bool = True) -> RawLine:
    return RawLine(number=1, data=data, terminated=terminated, too_long=False)


@pytest.fixture
def file_at(tmp_path_factory):
    folder = tmp_path_factory.mktemp("properties")

    def write(content: bytes, name: str = "corpus.txt") -> Path:
        path = folder / name
        path.write_bytes(content)
        return path

    return write


@PROPERTY
@given(content=file_bytes, gz=st.booleans())
def test_the_line_reader_yields_bounded_numbered_lines_or_a_clear_error(file_at, content, gz):
    path = file_at(content, "corpus.txt.gz" if gz else "corpus.txt")
    try:
        lines = list(LineReader(path, max_bytes=64))
    except CLEAN_ERRORS:
        return
    assert [line.number for line in lines] == list(range(1, len(lines) + 1))
    for line in lines:
        assert b"\n" not in line.data and len(line.data) <= 64
        assert not (line.too_long and line.data)


@PROPERTY
@given(texts=st.lists(stored_text.filter(lambda t: "\n" not in t and "\r" not in t), min_size=1, max_size=8))
def test_lines_come_back_as_written_with_either_line_end(file_at, texts):
    for eol in ("\n", "\r\n"):
        path = file_at("".join(text + eol for text in texts).encode("utf-8"))
        lines = list(LineReader(path, max_bytes=1 << 12))
        decoded = [decode_field(line.data, path=path, line=line.number, field="text") for line in lines]
        assert decoded == texts and all(line.terminated for line in lines)


@PROPERTY
@given(data=file_bytes, encoding=st.sampled_from(["utf-8", "latin-1", "cp1252"]))
def test_a_field_decodes_to_storable_text_or_a_clear_error(data, encoding):
    try:
        text = decode_field(data, path=PATH, line=1, field="text", encoding=encoding)
    except CLEAN_ERRORS as error:
        assert "corpus.txt, line 1, field text:" in str(error)
        return
    assert "\x00" not in text
    text.encode("utf-8")  # no lone surrogate


@PROPERTY
@given(text=stored_text)
def test_a_field_comes_back_as_written(text):
    assert decode_field(text.encode("utf-8"), path=PATH, line=1, field="text") == text


@PROPERTY
@given(data=file_bytes)
def test_a_json_line_parses_or_is_a_clear_error_naming_its_line(data):
    try:
        value = parse_json_line(data, path=PATH, line=3)
    except CLEAN_ERRORS as error:
        assert "corpus.txt, line 3" in str(error)
        return
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # storable as it is


@PROPERTY
@given(text=st.text(st.sampled_from('[]{}:,"\\ud80\\u0000aeNIfinty1-.'), max_size=200))
def test_json_like_text_parses_or_is_a_clear_error(text):
    try:
        parse_json_line(text.encode("utf-8"), path=PATH, line=1)
    except CLEAN_ERRORS:
        pass


@PROPERTY
@given(value=json_values, ensure_ascii=st.booleans())
def test_json_values_come_back_as_written(value, ensure_ascii):
    data = json.dumps(value, ensure_ascii=ensure_ascii).encode("utf-8")
    assert parse_json_line(data, path=PATH, line=1) == value


@PROPERTY
@given(content=file_bytes)
def test_a_csv_file_gives_rows_or_a_clear_error(file_at, content):
    try:
        rows = list(csv_rows(file_at(content, "a.csv")))
    except CLEAN_ERRORS as error:
        assert "a.csv" in str(error)
        return
    assert [line for line, _ in rows] == sorted(line for line, _ in rows)


@PROPERTY
@given(rows=st.lists(st.lists(stored_text, min_size=1, max_size=4), min_size=1, max_size=5))
def test_csv_rows_come_back_as_written(file_at, rows):
    out = io.StringIO(newline="")
    csv.writer(out).writerows(rows)
    assert [row for _, row in csv_rows(file_at(out.getvalue().encode("utf-8"), "a.csv"))] == rows


@PROPERTY
@given(data=file_bytes, terminated=st.booleans())
def test_the_dailydialog_parser_gives_a_question_a_skip_or_a_clear_error(data, terminated):
    report = {"skipped_truncated_last_line": 0, "skipped_short": 0}
    try:
        _parse_dailydialog(raw_line(data, terminated), path=PATH, context_turns=2, encoding="utf-8", report=report)
    except CLEAN_ERRORS:
        pass


@PROPERTY
@given(turns=st.lists(utterance, min_size=3, max_size=6))
def test_dailydialog_turns_come_back_as_written(turns):
    data = "".join(f"{turn} __eou__ " for turn in turns).encode("utf-8")
    record = _parse_dailydialog(raw_line(data), path=PATH, context_turns=2, encoding="utf-8", report={})
    assert [*record.context, record.ground_truth] == [clean_text(turn) for turn in turns[:3]]


@PROPERTY
@given(data=file_bytes, terminated=st.booleans())
def test_the_jsonl_dialogue_parser_gives_a_question_a_skip_or_a_clear_error(data, terminated):
    report = {"skipped_truncated_last_line": 0}
    try:
        _parse_jsonl(raw_line(data, terminated), path=PATH, context_turns=3, encoding="utf-8", report=report)
    except CLEAN_ERRORS:
        pass


@PROPERTY
@given(context=st.lists(utterance, min_size=1, max_size=5), response=utterance)
def test_jsonl_dialogues_come_back_as_written(context, response):
    data = json.dumps({"context": context, "response": response}).encode("utf-8")
    record = _parse_jsonl(raw_line(data), path=PATH, context_turns=3, encoding="utf-8", report={})
    assert record.context == [clean_text(turn) for turn in context[-3:]]
    assert record.ground_truth == clean_text(response)


@PROPERTY
@given(data=file_bytes)
def test_the_tsv_parser_gives_a_question_or_a_clear_error(data):
    try:
        _parse_tsv_line(raw_line(data), path=PATH, shape=_Shape(context_turns=1), encoding="utf-8")
    except CLEAN_ERRORS:
        pass


@PROPERTY
@given(fields=st.lists(utterance.filter(lambda t: "\t" not in t), min_size=3, max_size=6))
def test_tsv_fields_come_back_as_written(fields):
    data = "\t".join(fields).encode("utf-8")
    try:
        record = _parse_tsv_line(raw_line(data), path=PATH, shape=_Shape(context_turns=1), encoding="utf-8")
    except UserError as error:  # only for candidates that repeat another after normalisation
        assert "same text" in str(error)
        return
    assert [*record.context, record.ground_truth, *record.false_candidates] == [clean_text(f) for f in fields]


@PROPERTY
@given(data=file_bytes)
def test_the_human_scores_parser_gives_scores_or_a_clear_error(data):
    try:
        _next_scores(iter([raw_line(data)]), tsv_line=1, path=PATH, shape=_Shape(context_turns=1), n_candidates=2)
    except CLEAN_ERRORS:
        pass


@PROPERTY
@given(scores=st.lists(st.lists(st.integers(0, 5), min_size=3, max_size=3), min_size=2, max_size=2))
def test_human_scores_come_back_as_written(scores):
    line = raw_line(json.dumps(scores).encode())
    shape = _Shape(context_turns=1)
    assert _next_scores(iter([line]), tsv_line=1, path=PATH, shape=shape, n_candidates=2) == scores


@PROPERTY
@given(data=file_bytes, terminated=st.booleans())
def test_the_hf_test_set_parser_gives_a_question_a_skip_or_a_clear_error(data, terminated):
    try:
        _parse_hf(raw_line(data, terminated), path=PATH)
    except CLEAN_ERRORS:
        pass


@PROPERTY
@given(values=st.fixed_dictionaries({name: json_values for name in HF_FIELDS}))
def test_the_hf_test_set_parser_refuses_any_wrong_value_clearly(values):
    try:
        _parse_hf(raw_line(json.dumps(values).encode("utf-8")), path=PATH)
    except CLEAN_ERRORS:
        pass


@PROPERTY
@given(
    context=st.lists(utterance, min_size=1, max_size=4),
    choices=st.lists(utterance, min_size=2, max_size=5, unique_by=lambda t: " ".join(t.split()).casefold()),
    data=st.data(),
)
def test_hf_test_set_questions_come_back_as_written(context, choices, data):
    label = data.draw(st.integers(0, len(choices) - 1))
    scores = data.draw(st.lists(st.lists(st.integers(0, 5), max_size=5), min_size=len(choices), max_size=len(choices)))
    sources = ["lexical" if i != label else "ground_truth" for i in range(len(choices))]
    line = {"question_id": "q-1", "context": context, "choices": choices, "label": label, "sources": sources}
    line |= {"derived_from": None, "scores": scores}
    try:
        record = _parse_hf(raw_line(json.dumps(line).encode("utf-8")), path=PATH)
    except UserError as error:
        assert "after normalisation" in str(error)  # texts that normalise alike (core.text.text_hash)
        return
    assert record.context == [clean_text(turn) for turn in context]
    assert record.choices == [clean_text(choice) for choice in choices]
    assert (record.label, record.scores, record.sources[label]) == (label, scores, "imported")


@PROPERTY
@given(text=file_bytes.map(lambda b: b.decode("utf-8", "replace")))
def test_the_scores_csv_row_parser_gives_a_row_or_a_clear_error(text):
    header = list(("question_id", "candidate_id", "annotator", "score"))
    try:
        _parse_row(_split(text, path=PATH, line=2), header=header, path=PATH, line=2, seen=set())
        _header(_split(text, path=PATH, line=1), path=PATH, line=1)
    except CLEAN_ERRORS:
        pass


@PROPERTY
@given(
    ids=st.tuples(st.integers(1, 2**63 - 1), st.integers(1, 2**63 - 1)),
    annotator=utterance.filter(lambda t: t.strip() == t and "," not in t and '"' not in t),
    score=st.integers(0, 5),
)
def test_scores_csv_rows_come_back_as_written(ids, annotator, score):
    header = ["question_id", "candidate_id", "annotator", "score"]
    row = _split(f"{ids[0]},{ids[1]},{annotator},{score}", path=PATH, line=2)
    assert _parse_row(row, header=header, path=PATH, line=2, seen=set()) == (2, *ids, annotator, score)


@PROPERTY
@given(data=file_bytes, fmt=st.sampled_from(FORMATS))
def test_the_repository_parsers_give_utterances_or_a_clear_error(data, fmt):
    try:
        for text, _ in _utterances(raw_line(data), fmt=fmt, path=PATH, encoding="utf-8"):
            assert "\x00" not in text
    except CLEAN_ERRORS:
        pass


@PROPERTY
@given(text=utterance)
def test_repository_lines_come_back_as_written(text):
    assert list(_utterances(raw_line(text.encode()), fmt="lines", path=PATH, encoding="utf-8")) == [(text, "")]


@PROPERTY
@given(content=file_bytes)
def test_the_ratings_reader_gives_items_or_a_clear_error(file_at, content):
    try:
        list(read_zhao(file_at(b"[" + content, "ratings.json")))
    except HumanRatingsError as error:
        assert "ratings.json" in str(error)
