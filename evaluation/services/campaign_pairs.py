"""The contrastive-pair part of a campaign report: each local system's correctness on the campaign's
pair set (its succeeded :class:`~evaluation.models.PairEvaluation`), overall and per pair type,
subtype and criterion. Overall correctness is one more ranking correlated with the human one."""

from evaluation.models import Campaign, EvaluationStatus, PairEvaluation
from evaluation.selectors_pairs import pair_set_counts

PARTS = ("per_type", "per_subtype", "per_criterion")


def campaign_pairs(campaign: Campaign, local: list[str], notes: list[str]) -> tuple[dict, dict | None]:
    """``({system: {"accuracy", "ci_low", "ci_high", "n"}}, the per-type breakdown or None)``."""
    if campaign.pair_set_id is None or not local:
        return {}, None
    name = campaign.pair_set.name
    counts = pair_set_counts(pair_set_id=campaign.pair_set_id)
    if not counts["counted"]:
        notes.append(f"pairs: set {name} has no accepted pair yet ({counts['pending_review']} pending review)")
        return {}, None
    found = {
        row["system__name"]: row
        for row in PairEvaluation.objects.filter(pair_set_id=campaign.pair_set_id, system__name__in=local).values(
            "system__name", "status", "summary", "error"
        )
    }
    correctness: dict[str, dict] = {}
    breakdown: dict[str, dict] = {}
    for system in sorted(local):
        row = found.get(system)
        if row is None or row["status"] != EvaluationStatus.SUCCEEDED:
            state = "has no evaluation yet" if row is None else f"evaluation is {row['status']}"
            error = (row or {}).get("error", "").strip().splitlines()
            notes.append(f"pairs: {system} {state}" + (f" ({error[0]})" if error else ""))
            continue
        summary = row["summary"]
        ci = summary.get("ci95") or [None, None]
        correctness[system] = {"accuracy": summary["accuracy"], "ci_low": ci[0], "ci_high": ci[1], "n": summary["n"]}
        breakdown[system] = {"all": _cell(summary), **{part: summary.get(part) or {} for part in PARTS}}
    behind = sorted(s for s, c in correctness.items() if c["n"] != counts["counted"])
    if behind:
        notes.append(
            f"pairs: {', '.join(behind)} scored fewer or more pairs than the {counts['counted']} of set {name} "
            "that count now (pairs accepted or dropped since): run the campaign again"
        )
    if counts["pending_review"]:
        notes.append(f"pairs: {counts['pending_review']} pairs of set {name} are pending review and not evaluated")
    if not breakdown:
        return correctness, None
    return correctness, {"pair_set": name, "counted": counts["counted"], "systems": breakdown}


def _cell(summary: dict) -> dict:
    return {key: summary.get(key) for key in ("n", "correct", "accuracy", "ci95")}
