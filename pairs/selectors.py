"""Reads of the pairs app: repository text for the bigram model, review queues and counts."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, Q, QuerySet

from annotation.models import Repository, Utterance
from pairs.models import AnnotatorVerdict, Pair, PairSet, Review

_CHUNK = 5000
# A pair is evaluated once a reviewer accepted it and the annotators did not drop it: never sent to
# them, or kept. Pairs pending review, rejected, being scored (undecided) or dropped are not.
COUNTED_VERDICTS = (AnnotatorVerdict.NOT_SENT, AnnotatorVerdict.KEPT)


def counted_pairs(*, pair_set_id: int) -> QuerySet[Pair]:
    return Pair.objects.filter(pair_set_id=pair_set_id, review=Review.ACCEPTED, annotator_verdict__in=COUNTED_VERDICTS)


def repository_texts(*, repository: Repository) -> Iterator[str]:
    """Every utterance of the repository, streamed (a repository can hold millions)."""
    yield from (
        Utterance.objects.filter(repository=repository)
        .order_by("id")
        .values_list("text", flat=True)
        .iterator(chunk_size=_CHUNK)
    )


def review_counts(*, pair_set: PairSet, pair_type: str = "") -> dict:
    """Pairs, reviewed, accepted, rejected and edited, of the set or one type: one query."""
    pairs = pair_set.pairs.all()
    if pair_type:
        pairs = pairs.filter(type=pair_type)
    return pairs.aggregate(
        pairs=Count("id"),
        reviewed=Count("id", filter=~Q(review=Review.PENDING)),
        accepted=Count("id", filter=Q(review=Review.ACCEPTED)),
        rejected=Count("id", filter=Q(review=Review.REJECTED)),
    )


def type_counts(*, pair_set: PairSet) -> list[dict]:
    """Per (type, subtype, criterion): pairs, accepted, pending (for the set's page)."""
    return list(
        pair_set.pairs.values("type", "subtype", "criterion")
        .annotate(
            pairs=Count("id"),
            accepted=Count("id", filter=Q(review=Review.ACCEPTED)),
            pending=Count("id", filter=Q(review=Review.PENDING)),
        )
        .order_by("type", "subtype", "criterion")
    )


def pair_types(*, pair_set: PairSet) -> list[str]:
    return list(pair_set.pairs.order_by("type").values_list("type", flat=True).distinct())


def review_queue(*, pair_set: PairSet, pair_type: str = "", state: str = Review.PENDING) -> QuerySet[Pair]:
    pairs = pair_set.pairs.filter(review=state) if state else pair_set.pairs.all()
    if pair_type:
        pairs = pairs.filter(type=pair_type)
    return pairs.order_by("id")


def pair_set_list() -> QuerySet[PairSet]:
    """Every pair set with its counts: one query."""
    return (
        PairSet.objects.select_related("dataset")
        .annotate(
            pair_total=Count("pairs"),
            reviewed_total=Count("pairs", filter=~Q(pairs__review=Review.PENDING)),
            accepted_total=Count("pairs", filter=Q(pairs__review=Review.ACCEPTED)),
        )
        .order_by("name")
    )


def dataset_pair_sets(*, dataset) -> list[dict]:
    """The pair sets built from the dataset, each with its pairs by review state: one query."""
    return list(
        PairSet.objects.filter(dataset=dataset)
        .values("name")
        .annotate(
            n_pairs=Count("pairs"),
            pending=Count("pairs", filter=Q(pairs__review=Review.PENDING)),
            accepted=Count("pairs", filter=Q(pairs__review=Review.ACCEPTED)),
        )
        .order_by("name")
    )
