"""Bulk creation of questions (context, turns, ground truth and candidates) for imports."""

from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError
from django.utils import timezone

from annotation.models import Candidate, CandidateSource, Context, Dataset, Question, Score, Turn
from core.bulk import ModelRows, bulk_writer
from core.errors import ImportFileError, UserError
from core.normalisers import TextNormaliser
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
    # The texts as the file had them where a normaliser changed them ("" where it did not):
    # each context turn's, then the ground truth's (None: no normaliser changed any)
    original_context: list[str] | None = None
    original_ground_truth: str = ""


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
        ModelRows(Turn, ["context_id", "position", "text", "text_hash", "speaker", "original_text"], now=now),
        (
            (
                cid,
                i,
                text,
                text_hash(text),
                r.speakers[i] if r.speakers else "",
                r.original_context[i] if r.original_context else "",
            )
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
            (
                candidate_id,
                qid,
                text,
                digest,
                i == 0,
                r.sources[i] if r.sources else CandidateSource.IMPORTED.value,
                r.original_ground_truth if i == 0 else "",
            )
            for i, (candidate_id, text, digest) in enumerate(
                zip(ids, [r.ground_truth, *r.false_candidates], digests, strict=True)
            )
        )
    columns = ["id", "question_id", "text", "text_hash", "is_ground_truth", "source", "original_text"]
    writer.insert(ModelRows(Candidate, columns, now=now), rows)
    return created


def record_normalise(
    record: QuestionRecord, *, normaliser: TextNormaliser, path, counts: dict[str, int]
) -> QuestionRecord:
    """``record`` with its context and ground truth normalised, keeping what the file had where the
    normaliser changed it; ``counts`` ("texts_seen", "texts_changed") grow. A text the normaliser
    empties (nothing but markup) is an error naming it: a turn cannot be dropped from a dialogue."""
    if not normaliser.changes_text:
        return record
    texts = [*record.context, record.ground_truth]
    fields = [*(f"context turn {i}" for i in range(1, len(record.context) + 1)), "ground truth"]
    normalised = []
    for text, field_name in zip(texts, fields, strict=True):
        result = clean_text(normaliser.normalise(text))
        if not result:
            raise ImportFileError(
                path, record.line, field_name, f"is empty after the {normaliser.name} normaliser ({text[:60]!r})"
            )
        normalised.append(result)
    originals = [text if result != text else "" for text, result in zip(texts, normalised, strict=True)]
    counts["texts_seen"] += len(texts)
    changed = sum(bool(original) for original in originals)
    counts["texts_changed"] += changed
    if not changed:
        return record
    record.context, record.ground_truth = normalised[:-1], normalised[-1]
    record.original_context, record.original_ground_truth = originals[:-1], originals[-1]
    return record
