"""Bulk creation of questions (context, turns, ground truth and candidates) for imports."""

from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError
from django.utils import timezone

from annotation.models import Candidate, CandidateSource, Context, Dataset, Question, Score, Turn
from core.bulk import ModelRows, bulk_writer
from core.errors import ImportFileError, UserError
from core.text import clean_text, text_hash


@dataclass(slots=True)
class QuestionRecord:
    """One parsed question, located in its file for error messages."""

    line: int
    context: list[str]
    ground_truth: str
    false_candidates: list[str] = field(default_factory=list)
    speakers: list[str] | None = None
    # CandidateSource of each candidate, ground truth first (None: all "imported")
    sources: list[str] | None = None


@dataclass(slots=True)
class CreatedQuestion:
    record: QuestionRecord
    question_id: int
    context_id: int
    candidate_ids: list[int]  # ground truth first, then false candidates in file order


def source_ensure_new(*, dataset: Dataset, source: str) -> None:
    if Context.objects.filter(dataset=dataset, source=source).exists():
        raise UserError(
            f"dataset {dataset.name!r} already contains questions imported from {source!r}; "
            "import into a new dataset (nothing was imported)"
        )


def questions_analyze(*, scores: bool = False) -> None:
    """After an import: statistics for the tables questions_bulk_create (and, with ``scores``,
    the scores import) filled, for the preview and the build that usually follow at once."""
    models = [Context, Turn, Question, Candidate, *([Score] if scores else [])]
    bulk_writer().analyze(*(model._meta.db_table for model in models))


def check_text(value: str, *, path, line: int, field_name: str) -> str:
    """Whitespace-normalised text, or an error naming the field when it is empty or too long."""
    text = clean_text(value)
    if not text:
        raise ImportFileError(path, line, field_name, "is empty")
    limit = settings.WELLCHOSEN_MAX_UTTERANCE_CHARS
    if len(text) > limit:
        raise ImportFileError(
            path,
            line,
            field_name,
            f"is {len(text)} characters long; the limit is {limit} (WELLCHOSEN_MAX_UTTERANCE_CHARS)",
        )
    return text


def questions_bulk_create(
    *, dataset: Dataset, source: str, path, records: list[QuestionRecord]
) -> list[CreatedQuestion]:
    """Create contexts, turns, questions, ground-truth and false candidates: rows written in bulk
    (core.bulk), one statement per table, keys taken up front."""
    hashes = []  # per record: the hash of the ground truth, then of each false candidate
    for record in records:
        digests = [text_hash(record.ground_truth)]
        seen: dict[str, str] = {digests[0]: "ground_truth"}
        for i, text in enumerate(record.false_candidates, start=1):
            digest = text_hash(text)
            if digest in seen:
                raise ImportFileError(
                    path, record.line, f"candidate {i}", f"is the same text as {seen[digest]} after normalisation"
                )
            seen[digest] = f"candidate {i}"
            digests.append(digest)
        hashes.append(digests)
    writer, now = bulk_writer(), timezone.now()
    context_ids = writer.ids(Context, len(records))
    try:
        writer.insert(
            ModelRows(Context, ["id", "dataset_id", "source", "source_line"], now=now),
            [(cid, dataset.pk, source, r.line) for cid, r in zip(context_ids, records, strict=True)],
        )
    except IntegrityError:
        raise UserError(f"{source}: a line was imported into dataset {dataset.name!r} twice") from None
    writer.insert(
        ModelRows(Turn, ["context_id", "position", "text", "text_hash", "speaker"], now=now),
        (
            (cid, i, text, text_hash(text), r.speakers[i] if r.speakers else "")
            for cid, r in zip(context_ids, records, strict=True)
            for i, text in enumerate(r.context)
        ),
    )
    question_ids = writer.ids(Question, len(records))
    writer.insert(
        ModelRows(Question, ["id", "dataset_id", "context_id", "ground_truth"], now=now),
        [
            (qid, dataset.pk, cid, r.ground_truth)
            for qid, cid, r in zip(question_ids, context_ids, records, strict=True)
        ],
    )
    candidate_ids = iter(writer.ids(Candidate, sum(len(digests) for digests in hashes)))
    created, rows = [], []
    for qid, cid, r, digests in zip(question_ids, context_ids, records, hashes, strict=True):
        ids = [next(candidate_ids) for _ in digests]
        created.append(CreatedQuestion(record=r, question_id=qid, context_id=cid, candidate_ids=ids))
        rows.extend(
            (candidate_id, qid, text, digest, i == 0, r.sources[i] if r.sources else CandidateSource.IMPORTED.value)
            for i, (candidate_id, text, digest) in enumerate(
                zip(ids, [r.ground_truth, *r.false_candidates], digests, strict=True)
            )
        )
    writer.insert(
        ModelRows(Candidate, ["id", "question_id", "text", "text_hash", "is_ground_truth", "source"], now=now), rows
    )
    return created
