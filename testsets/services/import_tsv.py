"""import_testset: the released format of Sato et al. and its human_scores.jsonl.

TSV, one question per line: context turns, ground truth, false candidates, tab-separated.
human_scores.jsonl, line n for question n: [[scores of the ground truth], [scores of false
candidate 1], ...], one score per annotator, 0-5.
"""

import json
import re
from pathlib import Path

from django.conf import settings
from django.db import transaction

from core.errors import ImportFileError, UserError
from core.json_lines import parse_json_line
from core.lines import LineReader, RawLine, decode_field, encoding_check
from core.services.jobs import JobProgress

from .annotators import imported_annotators_get_or_create, imported_scores_insert
from .datasets import dataset_get_or_create
from .questions import (
    CreatedQuestion,
    QuestionRecord,
    check_text,
    questions_analyze,
    questions_bulk_create,
    source_ensure_new,
)


def testset_import(
    *,
    tsv_path: Path,
    dataset_name: str,
    scores_path: Path | None = None,
    context_turns: int = 3,
    encoding: str = "utf-8",
    progress: JobProgress | None = None,
) -> dict:
    encoding_check(encoding=encoding)
    tsv_path = Path(tsv_path)
    scores_path = Path(scores_path) if scores_path else None
    max_bytes = settings.WELLCHOSEN_MAX_UTTERANCE_CHARS * 4 * 32
    tsv = LineReader(tsv_path, max_bytes=max_bytes)
    scores_lines = iter(LineReader(scores_path, max_bytes=1 << 16)) if scores_path else None
    report = {"dataset": dataset_name, "questions": 0, "candidates": 0, "scores": 0, "annotators_per_candidate": None}
    shape = _Shape(context_turns=context_turns)
    batch: list[tuple[QuestionRecord, list[list[int]] | None]] = []

    with transaction.atomic():
        dataset = dataset_get_or_create(name=dataset_name, context_turns=context_turns)
        source_ensure_new(dataset=dataset, source=tsv_path.name)
        for line in tsv:
            record = _parse_tsv_line(line, path=tsv_path, shape=shape, encoding=encoding)
            scores = None
            if scores_lines is not None:
                scores = _next_scores(
                    scores_lines,
                    tsv_line=line.number,
                    path=scores_path,
                    shape=shape,
                    n_candidates=1 + len(record.false_candidates),
                )
            batch.append((record, scores))
            if len(batch) >= settings.WELLCHOSEN_IMPORT_BATCH_SIZE:
                _flush(batch, dataset=dataset, path=tsv_path, report=report, shape=shape)
                batch = []
            if progress:
                tsv.report(progress)
        if progress:
            tsv.report(progress, force=True)
        if batch:
            _flush(batch, dataset=dataset, path=tsv_path, report=report, shape=shape)
        if scores_lines is not None:
            extra = next((extra for extra in scores_lines if extra.data.strip()), None)
            if extra is not None:
                raise ImportFileError(
                    scores_path,
                    extra.number,
                    None,
                    f"has more lines than {tsv_path.name} ({report['questions']} questions)",
                )
        if report["questions"] == 0:
            raise UserError(f"{tsv_path.name}: no questions found; nothing was imported")
        questions_analyze(scores=scores_lines is not None)
    report["annotators_per_candidate"] = shape.n_annotators
    return report


class _Shape:
    """Column and score counts fixed by the first line; every later line must match."""

    def __init__(self, *, context_turns: int) -> None:
        self.context_turns = context_turns
        self.n_fields: int | None = None
        self.n_annotators: int | None = None
        self.annotators = None


def _parse_tsv_line(line: RawLine, *, path: Path, shape: _Shape, encoding: str) -> QuestionRecord:
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


def _next_scores(lines, *, tsv_line: int, path: Path, shape: _Shape, n_candidates: int) -> list[list[int]]:
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


def _flush(batch, *, dataset, path: Path, report: dict, shape: _Shape) -> None:
    created: list[CreatedQuestion] = questions_bulk_create(
        dataset=dataset, source=path.name, path=path, records=[record for record, _ in batch]
    )
    report["questions"] += len(created)
    report["candidates"] += sum(len(c.candidate_ids) for c in created)
    scored = [(item.candidate_ids, scores) for item, (_, scores) in zip(created, batch, strict=True) if scores]
    if scored:
        if shape.annotators is None:
            shape.annotators = imported_annotators_get_or_create(namespace=dataset.name, count=shape.n_annotators)
        report["scores"] += imported_scores_insert(scored=scored, annotators=shape.annotators)
