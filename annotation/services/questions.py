"""Bulk creation of questions (context, turns, ground truth and candidates) for imports."""

from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError

from annotation.models import Candidate, CandidateSource, Context, Dataset, Question, Turn
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
    question: Question
    candidate_ids: list[int]  # ground truth first, then false candidates in file order


def source_ensure_new(*, dataset: Dataset, source: str) -> None:
    if Context.objects.filter(dataset=dataset, source=source).exists():
        raise UserError(
            f"dataset {dataset.name!r} already contains questions imported from {source!r}; "
            "import into a new dataset (nothing was imported)"
        )


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
    """Create contexts, turns, questions, ground-truth and false candidates in a few queries."""
    for record in records:
        seen: dict[str, str] = {text_hash(record.ground_truth): "ground_truth"}
        for i, text in enumerate(record.false_candidates, start=1):
            digest = text_hash(text)
            if digest in seen:
                raise ImportFileError(
                    path, record.line, f"candidate {i}", f"is the same text as {seen[digest]} after normalisation"
                )
            seen[digest] = f"candidate {i}"
    try:
        contexts = Context.objects.bulk_create(
            [Context(dataset=dataset, source=source, source_line=r.line) for r in records]
        )
    except IntegrityError:
        raise UserError(f"{source}: a line was imported into dataset {dataset.name!r} twice") from None
    Turn.objects.bulk_create(
        [
            Turn(
                context=ctx,
                position=i,
                text=text,
                text_hash=text_hash(text),
                speaker=(r.speakers[i] if r.speakers else ""),
            )
            for ctx, r in zip(contexts, records, strict=True)
            for i, text in enumerate(r.context)
        ]
    )
    questions = Question.objects.bulk_create(
        [
            Question(dataset=dataset, context=ctx, ground_truth=r.ground_truth)
            for ctx, r in zip(contexts, records, strict=True)
        ]
    )
    candidates = Candidate.objects.bulk_create(
        [
            Candidate(
                question=q,
                text=text,
                text_hash=text_hash(text),
                is_ground_truth=(i == 0),
                source=(r.sources[i] if r.sources else CandidateSource.IMPORTED),
            )
            for q, r in zip(questions, records, strict=True)
            for i, text in enumerate([r.ground_truth, *r.false_candidates])
        ]
    )
    created, offset = [], 0
    for q, r in zip(questions, records, strict=True):
        n = 1 + len(r.false_candidates)
        created.append(
            CreatedQuestion(record=r, question=q, candidate_ids=[c.pk for c in candidates[offset : offset + n]])
        )
        offset += n
    return created
