"""The released format of Sato et al.: a TSV and its human_scores.jsonl, written and read.

TSV, one question per line: context turns, ground truth, false candidates, tab-separated.
human_scores.jsonl, line n for question n: [[scores of the ground truth], [scores of false
candidate 1], ...], one score per annotator, 0-5. The import (testsets.services.import_tsv) reads
them back line by line with the parsers below.
"""

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from annotation.services.questions import QuestionRecord, check_text
from core.errors import ImportFileError
from core.json_lines import parse_json_line
from core.lines import RawLine, decode_field
from testsets.items import TestSetItem
from testsets.job_params import ImportTestsetParams

from .base import ExportFile, TestsetFormat


def _one_line(text: str) -> str:
    # Stored texts are whitespace-normalised already; this guards the line-based formats.
    return " ".join(text.split())


def render_tsv(items: Iterable[TestSetItem]) -> Iterator[str]:
    """Sato et al.'s released format: context turns, ground truth, false candidates."""
    for item in items:
        fields = [t.text for t in item.turns] + [item.ground_truth.candidate.text]
        fields += [c.candidate.text for c in item.false_candidates]
        yield "\t".join(_one_line(f) for f in fields) + "\n"


def render_human_scores(items: Iterable[TestSetItem]) -> Iterator[str]:
    """human_scores.jsonl aligned with the TSV: ground truth's scores, then each false candidate's."""
    for item in items:
        ordered = [item.ground_truth, *item.false_candidates]
        yield json.dumps([[value for _, value in c.scores] for c in ordered], separators=(", ", ": ")) + "\n"


class TSVFormat(TestsetFormat):
    name = "tsv"
    files = (
        ExportFile(
            kind="tsv",
            suffix=".tsv",
            content_type="text/tab-separated-values",
            version=1,
            render=lambda items, testset, version: render_tsv(items),
        ),
        ExportFile(
            kind="human_scores",
            suffix=".human_scores.jsonl",
            content_type="application/jsonl",
            version=1,
            render=lambda items, testset, version: render_human_scores(items),
            texts=False,
        ),
    )
    import_params = ImportTestsetParams


# Reading them back (import_testset --format tsv)


class TSVShape:
    """Column and score counts fixed by the first line; every later line must match."""

    def __init__(self, *, context_turns: int) -> None:
        self.context_turns = context_turns
        self.n_fields: int | None = None
        self.n_annotators: int | None = None
        self.annotators = None


def tsv_line_parse(line: RawLine, *, path: Path, shape: TSVShape, encoding: str) -> QuestionRecord:
    if line.too_long:
        raise ImportFileError(path, line.number, None, "line is too long")
    fields = line.data.split(b"\t")
    minimum = shape.context_turns + 2
    if shape.n_fields is None:
        if len(fields) < minimum:
            raise ImportFileError(
                path,
                line.number,
                None,
                f"expected at least {minimum} tab-separated fields ({shape.context_turns} context turns, ground truth, "
                f"false candidates), found {len(fields)}",
            )
        shape.n_fields = len(fields)
    elif len(fields) != shape.n_fields:
        raise ImportFileError(
            path, line.number, None, f"expected {shape.n_fields} tab-separated fields as on line 1, found {len(fields)}"
        )
    names = (
        [f"context {i + 1}" for i in range(shape.context_turns)]
        + ["ground truth"]
        + [f"candidate {i + 1}" for i in range(len(fields) - shape.context_turns - 1)]
    )
    texts = [
        check_text(
            decode_field(raw, path=path, line=line.number, field=name, encoding=encoding),
            path=path,
            line=line.number,
            field_name=name,
        )
        for raw, name in zip(fields, names, strict=True)
    ]
    k = shape.context_turns
    return QuestionRecord(
        line=line.number,
        context=texts[:k],
        ground_truth=texts[k],
        false_candidates=texts[k + 1 :],
        speakers=["A" if i % 2 == 0 else "B" for i in range(k)],
    )


def scores_line_next(lines, *, tsv_line: int, path: Path, shape: TSVShape, n_candidates: int) -> list[list[int]]:
    line = next(lines, None)
    if line is None:
        raise ImportFileError(path, None, None, f"has fewer lines than the test set (nothing for its line {tsv_line})")
    if line.too_long:
        raise ImportFileError(path, line.number, None, "line is too long")
    data = _score_lists(line.data, path=path, line=line.number)
    if not isinstance(data, list) or len(data) != n_candidates:
        found = len(data) if isinstance(data, list) else type(data).__name__
        raise ImportFileError(
            path,
            line.number,
            None,
            f"expected a list of {n_candidates} score lists (ground truth + false candidates), found {found}",
        )
    for i, scores in enumerate(data):
        name = "ground truth scores" if i == 0 else f"candidate {i} scores"
        if not isinstance(scores, list) or not scores:
            raise ImportFileError(path, line.number, name, "must be a non-empty list of scores")
        if shape.n_annotators is None:
            shape.n_annotators = len(scores)
        elif len(scores) != shape.n_annotators:
            raise ImportFileError(
                path,
                line.number,
                name,
                f"has {len(scores)} scores; every list must have {shape.n_annotators} (ragged score lists)",
            )
        for j, value in enumerate(scores, start=1):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 5:
                raise ImportFileError(
                    path, line.number, f"{name}, annotator {j}", f"score {value!r} is not an integer from 0 to 5"
                )
    return data


# A line of flat lists of small integers, as the released files have them: nothing in it (no
# string, no object, no nesting below the second level, no long number) that the checks of
# core.json_lines.parse_json_line look for, so the plain decoder gives the same value faster.
_PLAIN_SCORES = re.compile(rb"\s*\[\s*(?:\[[0-9 ,]*\]\s*,?\s*)*\]\s*")
_PLAIN_NUMBER = re.compile(rb"[0-9]{10}")


def _score_lists(data: bytes, *, path: Path, line: int):
    if _PLAIN_SCORES.fullmatch(data) and not _PLAIN_NUMBER.search(data):
        try:
            return json.loads(data)
        except ValueError:
            pass  # e.g. a leading zero: the full parser says what is wrong
    return parse_json_line(data, path=path, line=line)
