"""Reads for pair evaluations: what a system scored on the pairs of a set that count
(:func:`pairs.selectors.counted_pairs`); a result computed while a pair counted stays stored but
leaves the summary when the pair stops counting."""

from django.db.models import Count, QuerySet

from evaluation.models import PairEvaluation, PairResult
from pairs.models import AnnotatorVerdict, Pair, Review
from pairs.selectors import COUNTED_VERDICTS, counted_pairs


def pending_pairs(*, evaluation: PairEvaluation) -> QuerySet[Pair]:
    """Counted pairs of the evaluation's set without a result yet, oldest first."""
    done = PairResult.objects.filter(evaluation=evaluation).values("pair_id")
    return counted_pairs(pair_set_id=evaluation.pair_set_id).exclude(id__in=done).order_by("id")


def pairs_with_texts(*, pair_ids: list[int]) -> list[dict]:
    return list(Pair.objects.filter(id__in=pair_ids).order_by("id").values("id", "context", "correct", "incorrect"))


def pair_results(*, evaluation: PairEvaluation) -> list[dict]:
    """One row per result of a pair that counts now, with the pair's type, subtype and criterion."""
    counted = counted_pairs(pair_set_id=evaluation.pair_set_id).values("id")
    return list(
        PairResult.objects.filter(evaluation=evaluation, pair_id__in=counted)
        .order_by("pair_id")
        .values(
            "pair_id",
            "correct",
            "correct_loss",
            "incorrect_loss",
            "correct_sum_logprob",
            "incorrect_sum_logprob",
            "pair__type",
            "pair__subtype",
            "pair__criterion",
        )
    )


def pair_set_counts(*, pair_set_id: int) -> dict[str, int]:
    """How many pairs of the set count, wait for a reviewer or the annotators, or are left out
    (rejected by the reviewer or dropped by the annotators)."""
    counts = {"counted": 0, "pending_review": 0, "awaiting_annotators": 0, "left_out": 0}
    rows = (
        Pair.objects.filter(pair_set_id=pair_set_id)
        .values("review", "annotator_verdict")
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in rows:
        if row["review"] == Review.PENDING:
            counts["pending_review"] += row["n"]
        elif row["review"] == Review.ACCEPTED and row["annotator_verdict"] in COUNTED_VERDICTS:
            counts["counted"] += row["n"]
        elif row["review"] == Review.ACCEPTED and row["annotator_verdict"] == AnnotatorVerdict.UNDECIDED:
            counts["awaiting_annotators"] += row["n"]
        else:
            counts["left_out"] += row["n"]
    return counts
