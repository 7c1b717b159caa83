"""The fluency check on a pair set's pending pairs (pairs.fluency): an edit the reference LM finds
much less fluent than the original is held back before review: rejected, with no reviewer, and
its losses in ``provenance["fluency"]`` (a reviewer can still accept it). Every pair checked keeps
its losses there; a pair checked already is skipped, so the check can run again after a build."""

from django.db import transaction

from core.errors import UserError
from pairs.fluency import MAX_LOSS_INCREASE, ReferenceLM
from pairs.models import Pair, PairSet, Review

BATCH = 64  # pairs per committed batch


def pairs_fluency_check(
    *, pair_set_name: str, lm: str, max_increase: float = MAX_LOSS_INCREASE, device: str | None = None
) -> dict:
    """Check the set's pending pairs not checked yet; returns the counts (checked, held back) and
    the setting."""
    pair_set = PairSet.objects.filter(name=pair_set_name).first()
    if pair_set is None:
        raise UserError(f"--set: no pair set {pair_set_name!r}")
    if not max_increase > 0:
        raise UserError(f"--max-increase must be above 0, not {max_increase}")
    reference = ReferenceLM(lm, setting="--lm", device=device)
    pending = Pair.objects.filter(pair_set=pair_set, review=Review.PENDING, provenance__fluency__isnull=True)
    report = {"pair_set": pair_set.name, "lm": reference.version, "max_increase": max_increase}
    report.update(checked=0, held_back=0, by_type={})
    after = 0
    while True:
        batch = list(pending.filter(id__gt=after).order_by("id")[:BATCH])
        if not batch:
            break
        after = batch[-1].pk
        measured = reference.fluency([(p.correct, p.incorrect) for p in batch])
        with transaction.atomic():
            for pair, fluency in zip(batch, measured, strict=True):
                held = fluency.held_back(max_increase)
                pair.provenance = {
                    **pair.provenance,
                    "fluency": {
                        "lm": reference.version,
                        "correct_loss": round(fluency.correct_loss, 4),
                        "incorrect_loss": round(fluency.incorrect_loss, 4),
                        "increase": round(fluency.increase, 4),
                        "continuation_increase": round(fluency.continuation_increase, 4),
                        "total_increase": round(fluency.total_increase, 4),
                        "max_increase": max_increase,
                        "held_back": held,
                    },
                }
                if held:
                    pair.review = Review.REJECTED
                counts = report["by_type"].setdefault(pair.type, {"checked": 0, "held_back": 0})
                counts["checked"] += 1
                counts["held_back"] += held
                report["checked"] += 1
                report["held_back"] += held
            Pair.objects.bulk_update(batch, ["provenance", "review"])
    return report
