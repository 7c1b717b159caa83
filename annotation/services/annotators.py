"""Annotator identities that imports and providers create on the fly."""

from collections.abc import Iterable

from annotation.models import Annotator, AnnotatorProvider, Score
from core.bulk import ModelRows, bulk_writer


def imported_annotators_get_or_create(*, namespace: str, count: int) -> list[Annotator]:
    """Placeholder annotators 1..count of the "imported" provider, one set per namespace.

    Released scores (e.g. Sato et al.'s human_scores.jsonl) say "annotator i of this
    question", not who; the placeholders keep the i-th position across questions.
    """
    labels = [f"{namespace}#{i}" for i in range(1, count + 1)]
    existing = {
        a.external_id: a for a in Annotator.objects.filter(provider=AnnotatorProvider.IMPORTED, external_id__in=labels)
    }
    missing = [
        Annotator(provider=AnnotatorProvider.IMPORTED, external_id=label, display_name=f"imported annotator {label}")
        for label in labels
        if label not in existing
    ]
    for annotator in Annotator.objects.bulk_create(missing):
        existing[annotator.external_id] = annotator
    return [existing[label] for label in labels]


def imported_scores_insert(*, scored: Iterable[tuple[list[int], list[list[int]]]], annotators: list[Annotator]) -> int:
    """Store imported scores, for each ``(candidate ids, score lists)``: the i-th value of a
    candidate's list by placeholder annotator i (a list may be shorter than ``annotators`` when
    scoring stopped early for that candidate). Rows written in bulk (core.bulk); returns how many."""
    annotator_ids = [a.pk for a in annotators]
    return bulk_writer().insert(
        ModelRows(Score, ["candidate_id", "annotator_id", "value"]),
        (
            (candidate_id, annotator_id, value)
            for candidate_ids, score_lists in scored
            for candidate_id, values in zip(candidate_ids, score_lists, strict=True)
            for annotator_id, value in zip(annotator_ids[: len(values)], values, strict=True)
        ),
    )


def annotators_by_label(*, labels: set[str]) -> dict[str, Annotator]:
    """Resolve "provider:external_id" labels (a bare id means provider "imported"), creating
    crowd and imported annotators as needed. Internal annotators must already exist."""
    wanted: dict[tuple[str, str], str] = {}
    for label in labels:
        provider, sep, external_id = label.partition(":")
        if not sep or provider not in AnnotatorProvider.values:
            provider, external_id = AnnotatorProvider.IMPORTED, label
        wanted[(provider, external_id)] = label
    found: dict[str, Annotator] = {}
    for provider in {p for p, _ in wanted}:
        ids = [e for p, e in wanted if p == provider]
        for annotator in Annotator.objects.filter(provider=provider, external_id__in=ids):
            found[wanted[(provider, annotator.external_id)]] = annotator
    missing = [
        Annotator(provider=p, external_id=e)
        for (p, e), label in wanted.items()
        if label not in found and p != AnnotatorProvider.INTERNAL
    ]
    for annotator in Annotator.objects.bulk_create(missing):
        found[wanted[(annotator.provider, annotator.external_id)]] = annotator
    return found
