"""import_testset: a released TSV of Sato et al. (and its human_scores.jsonl) imported as a dataset
with scores; the lines are read by testsets.formats.tsv."""

import gzip
import zlib
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.models import Candidate, Context, Question, Score, Turn
from annotation.services.annotators import imported_annotators_get_or_create, imported_scores_insert
from annotation.services.datasets import dataset_get_or_create
from annotation.services.questions import (
    CreatedQuestion,
    QuestionRecord,
    questions_analyze,
    questions_bulk_create,
    source_ensure_new,
)
from core.bulk_keys import foreign_keys_after_load, load_fields
from core.errors import ImportFileError, UserError
from core.gc_pause import gc_paused
from core.lines import LineReader, encoding_check
from core.prefetch import prefetched
from core.services.jobs import JobProgress
from testsets.formats.tsv import TSVShape, scores_line_next, tsv_line_parse


@gc_paused()
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
    shape = TSVShape(context_turns=context_turns)
    rows = rows_estimate(tsv_path=tsv_path, context_turns=context_turns, scores=scores_path is not None)
    with transaction.atomic():
        dataset = dataset_get_or_create(name=dataset_name, context_turns=context_turns)
        source_ensure_new(dataset=dataset, source=tsv_path.name)
        with foreign_keys_after_load(fields=LOADED_KEYS, rows=rows) as keys:
            _load(
                tsv,
                scores_lines,
                dataset=dataset,
                path=tsv_path,
                scores_path=scores_path,
                report=report,
                shape=shape,
                encoding=encoding,
                progress=progress,
            )
        if report["questions"] == 0:
            raise UserError(f"{tsv_path.name}: no questions found; nothing was imported")
        questions_analyze(scores=scores_lines is not None)
    report["annotators_per_candidate"] = shape.n_annotators
    report["foreign_keys"] = keys.as_dict()
    return report


# The keys an import fills (the others it leaves NULL: a NULL key is never checked)
LOADED_KEYS = load_fields(
    (Context, "dataset"),
    (Turn, "context"),
    (Question, "dataset"),
    (Question, "context"),
    (Candidate, "question"),
    (Score, "candidate"),
    (Score, "annotator"),
)
# Placeholder annotators per response when the scores file is not read yet (Sato et al.: 5)
_ANNOTATORS_GUESS = 5


def rows_estimate(*, tsv_path: Path, context_turns: int, scores: bool) -> int:
    """Rows an import of ``tsv_path`` writes, from its lines and fields (one pass over the bytes):
    per line a context, its turns and a question; per response a candidate and, with scores,
    about five scores."""
    lines = fields = 0
    try:
        with (gzip.open if tsv_path.suffix == ".gz" else open)(tsv_path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                lines += chunk.count(b"\n")
                fields += chunk.count(b"\t")
    except (OSError, EOFError, zlib.error):
        return 0  # an unreadable file: the import's reader says where, with its usual error
    fields += lines  # n tabs separate n + 1 fields
    responses = max(fields - lines * context_turns, 0)
    return lines * (context_turns + 2) + responses * (1 + (_ANNOTATORS_GUESS if scores else 0))


def _load(tsv, scores_lines, *, dataset, path: Path, scores_path, report, shape: TSVShape, encoding, progress) -> None:
    """Parse the lines a batch at a time, the next batch in a thread while the current one is
    written (core.prefetch): parsing and the database's work on the rows overlap."""
    batches = _parsed_batches(tsv, scores_lines, path=path, scores_path=scores_path, shape=shape, encoding=encoding)
    for batch in prefetched(batches):
        _flush(batch, dataset=dataset, path=path, report=report, shape=shape)
        if progress:
            tsv.report(progress)
    if progress:
        tsv.report(progress, force=True)


def _parsed_batches(tsv, scores_lines, *, path: Path, scores_path, shape: TSVShape, encoding):
    """Batches of (question record, its scores or None), every line checked; no database access."""
    batch: list[tuple[QuestionRecord, list[list[int]] | None]] = []
    parsed = 0
    for line in tsv:
        parsed += 1
        record = tsv_line_parse(line, path=path, shape=shape, encoding=encoding)
        scores = None
        if scores_lines is not None:
            scores = scores_line_next(
                scores_lines,
                tsv_line=line.number,
                path=scores_path,
                shape=shape,
                n_candidates=1 + len(record.false_candidates),
            )
        batch.append((record, scores))
        if len(batch) >= settings.WELLCHOSEN_IMPORT_BATCH_SIZE:
            yield batch
            batch = []
    if batch:
        yield batch
    if scores_lines is not None:
        extra = next((extra for extra in scores_lines if extra.data.strip()), None)
        if extra is not None:
            raise ImportFileError(
                scores_path, extra.number, None, f"has more lines than {path.name} ({parsed} questions)"
            )


def _flush(batch, *, dataset, path: Path, report: dict, shape: TSVShape) -> None:
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
