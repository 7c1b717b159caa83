"""Reads: the dialogue text a masked LM is fine-tuned on.

Each text comes with the turns before it (up to ``CONTEXT_TURNS``), as ``(context, text)``: the
manipulation scores a word with the context as the first segment and the response as the
second (``[CLS] c [SEP] r [SEP]``), so the model is fine-tuned on that shape of input too.

Every read streams (``.iterator()``): a repository can hold millions of utterances, and a
fine-tuning run reads its texts once per epoch.
"""

import hashlib
from collections import deque
from collections.abc import Iterator

from django.db.models import Max

from annotation.models import Dataset, Question, Repository, Turn, Utterance
from negatives.manipulation import CONTEXT_TURNS, context_text

_CHUNK = 5000
REPOSITORY_NEIGHBOURS = 3  # lines: how far back in a file an utterance may be to count as context


def dataset_texts(*, dataset: Dataset) -> Iterator[tuple[str, str]]:
    """Each distinct ``(context, text)`` of the dataset once: every turn of a context with the turns
    before it, and every ground truth with its context. A turn recurs in the contexts of
    consecutive questions; once is what one epoch over the dialogues means."""
    seen: set[bytes] = set()

    def once(context: str, text: str) -> bool:
        key = hashlib.blake2b(f"{context}\n{text}".encode(), digest_size=12).digest()
        if key in seen:
            return False
        seen.add(key)
        return True

    questions = (
        Question.objects.filter(dataset=dataset)
        .order_by("context_id", "id")
        .values_list("context_id", "ground_truth")
        .iterator(chunk_size=_CHUNK)
    )
    turns = (
        Turn.objects.filter(context__dataset=dataset)
        .order_by("context_id", "position")
        .values_list("context_id", "text")
        .iterator(chunk_size=_CHUNK)
    )
    pending = next(turns, None)
    for context_id, ground_truth in questions:
        before: list[str] = []
        while pending is not None and pending[0] <= context_id:
            if pending[0] == context_id:
                text, context = pending[1].strip(), context_text(before[-CONTEXT_TURNS:])
                if text and once(context, text):
                    yield context, text
                before.append(pending[1])
            pending = next(turns, None)
        if not before:  # a second question on the same context: its turns were read with the first
            before = list(
                Turn.objects.filter(context_id=context_id).order_by("position").values_list("text", flat=True)
            )
        text, context = ground_truth.strip(), context_text(before[-CONTEXT_TURNS:])
        if text and once(context, text):
            yield context, text


def repository_snapshot(*, repository: Repository) -> tuple[int, int]:
    """(highest utterance id, utterances up to it): imports only add rows, so reading up to that
    id gives every epoch the same texts while an import runs."""
    top = Utterance.objects.filter(repository=repository).aggregate(m=Max("id"))["m"] or 0
    return top, Utterance.objects.filter(repository=repository, id__lte=top).count()


def repository_texts(*, repository: Repository, up_to_id: int) -> Iterator[tuple[str, str]]:
    """The repository's utterances (distinct by construction) up to ``up_to_id``, in id order, each
    with the utterances before it from the same file within ``REPOSITORY_NEIGHBOURS`` lines: the
    previous lines of a subtitle or movie-lines file, the earlier turns of a DailyDialog dialogue
    (one line of its file)."""
    rows = (
        Utterance.objects.filter(repository=repository, id__lte=up_to_id)
        .order_by("id")
        .values_list("text", "source", "source_line")
        .iterator(chunk_size=_CHUNK)
    )
    recent: deque[tuple[str, str, int]] = deque(maxlen=CONTEXT_TURNS)
    for text, source, line in rows:
        before = [t for t, s, n in recent if s == source and 0 <= line - n <= REPOSITORY_NEIGHBOURS]
        recent.append((text, source, line))
        text = text.strip()
        if text:
            yield context_text(before), text


def dataset_generation_counts(*, dataset: Dataset) -> dict[str, int]:
    """The dataset's questions by generation outcome (over every setup), one aggregate query."""
    from django.db.models import Count

    from negatives.models import QuestionGeneration

    return dict(
        QuestionGeneration.objects.filter(question__dataset=dataset)
        .values_list("outcome")
        .annotate(n=Count("id"))
        .order_by()
    )


def dataset_negatives_figures(*, dataset: Dataset) -> dict:
    """The generation figures of the dataset's latest setup (model and settings: the last run,
    resumed or not), one aggregate query: its questions, those that received a negative, those that
    received none by why (NO_NEGATIVE_REASONS), the negatives made but not added by why
    (DROP_REASONS), and of the responses with a selected word the share of words and of WordPiece
    tokens replaced (each pooled; None without any)."""
    from django.db.models import Count, OuterRef, Q, Subquery, Sum

    from negatives.models import DROP_REASONS, NO_NEGATIVE_REASONS, GenerationOutcome, QuestionGeneration

    generated = Q(outcome=GenerationOutcome.GENERATED)
    rows = QuestionGeneration.objects.filter(question__dataset=dataset)
    latest = rows.filter(question__dataset=OuterRef("question__dataset")).order_by("-updated_at", "-id")
    sums = rows.filter(setup=Subquery(latest.values("setup")[:1])).aggregate(
        questions=Count("id"),
        received=Count("id", filter=Q(negatives_added__gt=0)),
        **{f"without_{r}": Count("id", filter=Q(without_negative=r)) for r in NO_NEGATIVE_REASONS},
        **{reason: Sum(reason) for reason in DROP_REASONS},
        words=Sum("words", filter=generated),
        selected=Sum("selected", filter=generated),
        tokens=Sum("tokens", filter=generated),
        tokens_selected=Sum("tokens_selected", filter=generated),
    )
    return {
        "questions": sums["questions"],
        "received": sums["received"],
        "without_negative": {r: sums[f"without_{r}"] for r in NO_NEGATIVE_REASONS},
        "dropped": {reason: sums[reason] or 0 for reason in DROP_REASONS},
        "share_of_words_replaced": sums["selected"] / sums["words"] if sums["words"] else None,
        # rows from before tokens were recorded count none
        "share_of_wordpiece_tokens_replaced": sums["tokens_selected"] / sums["tokens"] if sums["tokens"] else None,
    }


def dataset_toy_negatives(*, dataset: Dataset) -> int:
    """The dataset's generated candidates that a toy masked LM made (their provenance says so)."""
    from annotation.models import Candidate, CandidateSource

    return Candidate.objects.filter(
        question__dataset=dataset, source=CandidateSource.MLM_NEGATIVE, provenance__toy_model=True
    ).count()


def dataset_guard_items(*, dataset: Dataset, limit: int) -> list:
    """The dataset's first ``limit`` questions (by id, derived ones left out) as manipulation items:
    the text the masked LM's guard is measured on (negatives.guard)."""
    from negatives.manipulation import Item

    rows = list(
        Question.objects.filter(dataset=dataset, derived_from__isnull=True)
        .order_by("id")
        .values_list("id", "context_id", "ground_truth")[:limit]
    )
    turns: dict[int, list[str]] = {}
    for context_id, text in (
        Turn.objects.filter(context_id__in={c for _, c, _ in rows})
        .order_by("context_id", "position")
        .values_list("context_id", "text")
    ):
        turns.setdefault(context_id, []).append(text)
    return [Item(key=qid, context=turns.get(cid, []), response=truth) for qid, cid, truth in rows]
