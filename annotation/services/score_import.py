"""import_scores: generic CSV ``question_id,candidate_id,annotator,score`` from elsewhere.

Ids are WellChosen's own (as in the JSONL and CSV exports). ``annotator`` is
``provider:external_id`` (e.g. ``mturk:A1B2C3``) or a bare id, taken as provider
"imported". Re-importing the same file changes nothing; a different value for an
existing (candidate, annotator) pair is an error: scores are never overwritten. Every row has
as many fields as the header (a row with more or fewer is an error, not a guess).
"""

import csv
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.models import Candidate, Dataset, DatasetTask, Question, Score
from annotation.selectors_annotators import annotator_label
from core.errors import ImportFileError, UserError
from core.lines import LineReader, decode_field, encoding_check, text_field_check
from core.services.jobs import JobProgress

from .annotators import annotators_by_label
from .assignment import works_refresh

COLUMNS = ("question_id", "candidate_id", "annotator", "score")
_MAX_ID = 2**63 - 1  # the databases' bigint


def scores_import(*, path: Path, encoding: str = "utf-8", progress: JobProgress | None = None) -> dict:
    encoding_check(encoding=encoding)
    path = Path(path)
    reader = LineReader(path, max_bytes=1 << 16)
    report = {"rows": 0, "created": 0, "unchanged": 0}
    seen: set[tuple[int, str]] = set()
    scored: set[int] = set()  # questions that got a new score
    header: list[str] | None = None
    batch: list[tuple[int, int, int, str, int]] = []
    with transaction.atomic():
        for line in reader:
            if line.too_long:
                raise ImportFileError(path, line.number, None, "line is too long")
            text = decode_field(line.data, path=path, line=line.number, field="(line)", encoding=encoding, check=False)
            if not text.strip():
                continue
            row = _split(text, path=path, line=line.number)
            if header is None:
                header = _header(row, path=path, line=line.number)
                continue
            batch.append(_parse_row(row, header=header, path=path, line=line.number, seen=seen))
            if len(batch) >= settings.WELLCHOSEN_IMPORT_BATCH_SIZE:
                scored |= _flush(batch, path=path, report=report)
                batch = []
            if progress:
                reader.report(progress)
        if progress:
            reader.report(progress, force=True)
        if header is None:
            raise UserError(f"{path.name}: empty file; expected the header {','.join(COLUMNS)}")
        if batch:
            scored |= _flush(batch, path=path, report=report)
        if report["rows"] == 0:
            raise UserError(f"{path.name}: the header is not followed by any score; nothing was imported")
        report["units_closed"] = _units_refresh(scored)
    return report


def _units_refresh(question_ids: set[int]) -> int:
    """Units of work (questions opened for annotation) whose new scores decide them are closed, as
    a submission would close them; returns how many closed. Questions not opened yet are left to
    annotation_open."""
    by_dataset: dict[int, list[int]] = {}
    ids = sorted(question_ids)
    for start in range(0, len(ids), 1000):
        chunk = Question.objects.filter(pk__in=ids[start : start + 1000], work__is_open=True)
        for dataset_id, question_id in chunk.values_list("dataset_id", "pk"):
            by_dataset.setdefault(dataset_id, []).append(question_id)
    return sum(
        works_refresh(dataset=dataset, question_ids=by_dataset[dataset.pk])
        for dataset in Dataset.objects.filter(pk__in=by_dataset)
    )


def _split(text: str, *, path: Path, line: int) -> list[str]:
    try:
        return next(csv.reader([text], strict=True))
    except csv.Error as exc:
        # e.g. a quoted field that goes on to the next line: every row is one line here
        raise ImportFileError(path, line, None, f"not a CSV row of one line ({exc})") from None


def _header(row: list[str], *, path: Path, line: int) -> list[str]:
    names = [name.strip().lower() for name in row]
    for name in names:
        text_field_check(name, path=path, line=line, field="header")
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise ImportFileError(
            path, line, None, f"header lacks column(s) {', '.join(missing)}; expected {','.join(COLUMNS)}"
        )
    repeated = sorted({name for name in names if names.count(name) > 1 and name})
    if repeated:
        raise ImportFileError(path, line, "header", f"column(s) {', '.join(repeated)} appear more than once")
    return names


def _parse_row(
    row: list[str], *, header: list[str], path: Path, line: int, seen: set
) -> tuple[int, int, int, str, int]:
    """``(line, question id, candidate id, annotator label, score)`` of a row, checked."""
    if len(row) != len(header):
        raise ImportFileError(
            path, line, None, f"expected {len(header)} comma-separated fields as in the header, found {len(row)}"
        )
    for name, value in zip(header, row, strict=True):
        text_field_check(value, path=path, line=line, field=name)
    columns = {c: header.index(c) for c in COLUMNS}
    values = {}
    for name in ("question_id", "candidate_id", "score"):
        raw = row[columns[name]].strip()
        try:
            values[name] = int(raw)
        except ValueError:
            raise ImportFileError(path, line, name, f"{raw!r} is not an integer") from None
    for name in ("question_id", "candidate_id"):
        if not 0 < values[name] <= _MAX_ID:
            raise ImportFileError(path, line, name, f"{values[name]} is not an id (a positive 64-bit integer)")
    if not 0 <= values["score"] <= 5:
        raise ImportFileError(path, line, "score", f"{values['score']} is outside 0-5")
    annotator = row[columns["annotator"]].strip()
    if not annotator:
        raise ImportFileError(path, line, "annotator", "is empty")
    key = (values["candidate_id"], annotator)
    if key in seen:
        raise ImportFileError(
            path, line, "annotator", f"{annotator!r} scores candidate {key[0]} a second time in this file"
        )
    seen.add(key)
    return line, values["question_id"], values["candidate_id"], annotator, values["score"]


def _flush(batch, *, path: Path, report: dict) -> set[int]:
    """Write a batch of rows; returns the questions that got a new score."""
    candidate_ids = {candidate_id for _, _, candidate_id, _, _ in batch}
    question_of, rating = {}, set()
    for pk, question_id, task in Candidate.objects.filter(pk__in=candidate_ids).values_list(
        "pk", "question_id", "question__dataset__task"
    ):
        question_of[pk] = question_id
        if task == DatasetTask.RATE:
            rating.add(pk)
    annotators = annotators_by_label(labels={label for _, _, _, label, _ in batch})
    existing = {
        (candidate_id, annotator_id): value
        for candidate_id, annotator_id, value in Score.objects.filter(
            candidate_id__in=candidate_ids, annotator__in=list(annotators.values())
        ).values_list("candidate_id", "annotator_id", "value")
    }
    new_scores = []
    for line, question_id, candidate_id, label, value in batch:
        if candidate_id not in question_of:
            raise ImportFileError(path, line, "candidate_id", f"no candidate {candidate_id}")
        if question_of[candidate_id] != question_id:
            raise ImportFileError(
                path,
                line,
                "question_id",
                f"candidate {candidate_id} belongs to question {question_of[candidate_id]}, not {question_id}",
            )
        if value < 1 and candidate_id in rating:
            raise ImportFileError(
                path, line, "score", f"{value} is outside 1-5 (candidate {candidate_id} is in a rating dataset)"
            )
        annotator = annotators.get(label)
        if annotator is None:
            raise ImportFileError(
                path, line, "annotator", f"no internal annotator {label!r} (create the account first)"
            )
        old = existing.get((candidate_id, annotator.pk))
        if old is None:
            new_scores.append(Score(candidate_id=candidate_id, annotator=annotator, value=value))
        elif old == value:
            report["unchanged"] += 1
        else:
            raise ImportFileError(
                path,
                line,
                "score",
                f"{annotator_label(annotator)} already gave candidate {candidate_id} a {old}; "
                "scores are never overwritten",
            )
    Score.objects.bulk_create(new_scores)
    report["rows"] += len(batch)
    report["created"] += len(new_scores)
    return {question_of[score.candidate_id] for score in new_scores}
