"""The campaign report: leaderboard, Table 3, Figure 2, the per-error-label and per-pair-type tables, as JSON.

Computed once (by the campaign job, ``report --recompute`` or the page's recompute button) and cached
on ``Campaign.report``: the page never bootstraps per request. Every part is optional; a part that
cannot be computed yet is left out and ``notes`` says why, instead of failing the report.

What is compared:

* human score: mean over a system's rated responses of their mean rating (the campaign's aspect);
  see :func:`evaluation.selectors_campaign.campaign_rated_contexts` for which contexts count;
* BLEU-1/2, METEOR, ROUGE-L: on the same responses as the human score (all of a system's responses
  when it has no ratings), against ``GeneratedResponse.references``;
* CHOSEN accuracy: the system's succeeded evaluation on the campaign's test set (every local system
  answers the same questions); RANDOM: its accuracy on each trial, correlated with the human scores
  trial by trial on the trials every RANDOM system finished;
* pair correctness: the system's succeeded pair evaluation on the campaign's pair set (share of
  accepted contrastive pairs whose correct response gets the lower loss), with the per-type table;
* correlations use the systems present in both rankings, and need at least 2 of them; with 2 a
  correlation is +1 or -1 (the same order as the humans or not), without a p-value or interval,
  and a note says so.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter

from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.toy_models import TOY_PURPOSE
from core.wordnet import WordNetMissing
from evaluation.human import system_human_scores
from evaluation.metrics.correlation import METHODS, split_half_bound
from evaluation.metrics.reference import METRICS, system_scores
from evaluation.models import Campaign, Evaluation, EvaluationStatus, RandomTrialResult, System
from evaluation.report import CHOSEN, PAIRS, box_plot_svg, correlation_table, random_trial_correlations
from evaluation.scoring.backends import backend_named
from evaluation.selectors_campaign import campaign_rated_contexts, campaign_responses, systems_compared

from .campaign_pairs import campaign_pairs
from .pair_evaluations import PAIR_CHANCE

MIN_SYSTEMS = 2  # two systems: +1 or -1; the p-value and the bootstrap interval need three


def campaign_report_refresh(*, campaign: Campaign) -> dict:
    """Compute the report and store it on the campaign (``report``, ``report_at``)."""
    report = campaign_report_compute(campaign=campaign)
    computed_at = parse_datetime(report["computed_at"])
    Campaign.objects.filter(pk=campaign.pk).update(report=report, report_at=computed_at)
    campaign.report, campaign.report_at = report, computed_at
    return report


def campaign_report_compute(*, campaign: Campaign) -> dict:
    """The report as a JSON-able dict (no NaN: missing values are None)."""
    from scipy import stats  # here, not at the top: scipy.stats alone costs every command ~0.4 s to start

    with warnings.catch_warnings():
        # constant scores (every system alike) have no rank correlation: noted in the report instead
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        return _compute(campaign)


def _compute(campaign: Campaign) -> dict:
    notes: list[str] = []
    systems = {
        row["name"]: row
        for row in System.objects.filter(Q(campaigns=campaign) | Q(generations__campaigns=campaign))
        .distinct()
        .values("name", "kind", "description", "toy_model")
    }
    for info in systems.values():  # scored on candidates (CHOSEN, RANDOM, pairs), or responses only
        info["scored"] = backend_named(info["kind"]).scores
    toys = sorted(name for name, info in systems.items() if info["toy_model"])
    if toys:
        notes.append(f"{', '.join(toys)}: {TOY_PURPOSE}")
    rated, rating_notes = campaign_rated_contexts(campaign=campaign)
    notes += rating_notes
    human = system_human_scores({s: list(r.values()) for s, r in rated.items()}) if rated else {}
    if not human:
        notes.append(
            f"no human ratings ({campaign.human_aspect}) yet: import them (import_human_ratings) "
            "or collect them with the rate-a-response task"
        )
    metrics = _reference_metrics(campaign, rated, notes)
    chosen, breakdown = _chosen(campaign, systems, notes)
    local = [name for name, info in systems.items() if info["scored"]]
    pairs, pair_breakdown = campaign_pairs(campaign, local, notes)
    random_by_system, trial_accuracies = _random(campaign, systems, notes)

    in_human = set(human)
    table = None
    random_correlations: list[dict] = []
    if len(human) < MIN_SYSTEMS:
        if human:
            notes.append(f"rank correlations need at least {MIN_SYSTEMS} systems with human scores; {len(human)} have")
    else:
        if len(human) == 2:
            notes.append(
                "2 systems with human scores: each correlation is +1 (the same order as the humans) or -1, "
                "with no p-value or interval; rank 3 or more systems for a meaningful table"
            )
        chosen_part = _enough({s: v for s, v in chosen.items() if s in in_human}, CHOSEN, notes)
        pair_part = _enough({s: v for s, v in pairs.items() if s in in_human}, PAIRS, notes)
        metric_part = _enough({s: v for s, v in metrics.items() if s in in_human}, "reference-based metrics", notes)
        if trial_accuracies and len(in_human & set(trial_accuracies[0])) >= MIN_SYSTEMS:
            random_correlations = random_trial_correlations(human, trial_accuracies)
        elif trial_accuracies:
            notes.append(f"RANDOM correlations need at least {MIN_SYSTEMS} systems with human scores and trials")
        split_half = _split_half(rated, campaign, notes)
        table = correlation_table(
            human=human,
            chosen_accuracy=chosen_part,
            pair_correctness=pair_part,
            metric_scores=metric_part,
            random_correlations=random_correlations or None,
            split_half=split_half,
            resamples=campaign.bootstrap_resamples,
            seed=campaign.seed,
        )
    for row in (table or {}).get("rows", []):
        if row["kind"] == "point" and row[METHODS[0]]["value"] is None:
            notes.append(f"{row['name']}: the systems' scores do not vary (or too few do): no correlation")
    undefined = sum(1 for c in random_correlations if not all(math.isfinite(c[m]) for m in METHODS))
    if undefined:
        notes.append(
            f"RANDOM: {undefined} trials gave every system the same accuracy (no correlation; "
            "left out of the range and the box plot)"
        )
    svg = None
    if random_correlations:
        chosen_row = next((r for r in table["rows"] if r["name"] == CHOSEN), None) if table else None
        dots = {m: chosen_row[m]["value"] for m in METHODS} if chosen_row else None
        try:
            svg = box_plot_svg(random_correlations, dots)
            svg = svg[svg.index("<svg") :]  # inline in HTML: no XML prolog or doctype
        except ValueError as error:  # every trial gave constant scores
            notes.append(f"no box plot: {error}")

    ranked = sorted(chosen, key=lambda name: (-(chosen[name]["accuracy"] or 0), name))
    comparisons = systems_compared(testset_id=campaign.testset_id, ranked=ranked) if len(ranked) > 1 else []
    comparisons_note(comparisons, notes)
    leaderboard = []
    for name, info in systems.items():
        accuracy = chosen.get(name, {})
        leaderboard.append(
            {
                "system": name,
                "kind": info["kind"],
                "scored": info["scored"],
                "description": info["description"],
                "toy_model": info["toy_model"],
                "human": human.get(name),
                "rated_responses": len(rated.get(name, {})),
                "accuracy": accuracy.get("accuracy"),
                "ci_low": accuracy.get("ci_low"),
                "ci_high": accuracy.get("ci_high"),
                "questions": accuracy.get("questions"),
                "random": random_by_system.get(name),
                "pairs": pairs.get(name),
                "metrics": metrics.get(name, {}),
            }
        )
    # best human score first; systems without one by CHOSEN accuracy, then by name
    leaderboard.sort(
        key=lambda r: (
            r["human"] is None,
            -(r["human"] or 0),
            r["accuracy"] is None,
            -(r["accuracy"] or 0),
            r["system"],
        ),
    )
    return _finite(
        {
            "campaign": campaign.name,
            "computed_at": timezone.now().isoformat(),
            "settings": {
                "testset": campaign.testset.name if campaign.testset_id else None,
                "repository": campaign.repository.name if campaign.repository_id else None,
                "pair_set": campaign.pair_set.name if campaign.pair_set_id else None,
                "aspect": campaign.human_aspect,
                "random_trials": campaign.random_trials,
                "seed": campaign.seed,
                "bootstrap_resamples": campaign.bootstrap_resamples,
                "split_half_trials": _split_half_trials(campaign),
            },
            "leaderboard": leaderboard,
            # what picking at random scores: CHOSEN on the release's candidates, RANDOM on 1 + k
            # candidates, a pair on two
            "chance": {
                "chosen": next((c["chance"] for c in chosen.values() if c.get("chance") is not None), None),
                "random": 1 / (campaign.testset.false_per_question + 1) if campaign.testset_id else None,
                "pairs": PAIR_CHANCE if campaign.pair_set_id else None,
            },
            "comparisons": comparisons,
            "table": table,
            "random_correlations": random_correlations,
            "box_plot_svg": svg,
            "breakdown": breakdown,
            "pair_breakdown": pair_breakdown,
            "notes": notes,
        }
    )


def comparisons_note(comparisons: list[dict], notes: list[str]) -> None:
    """A note when neighbours of the CHOSEN ranking cannot be told apart on this test set."""
    unclear = [c for c in comparisons if not c["significant"]]
    if not unclear:
        return
    needs = [c["questions_needed"] for c in unclear if c["questions_needed"]]
    pairs = ", ".join(f"{c['first']} / {c['second']}" for c in unclear)
    more = f"; about {max(needs):,} questions would be needed to tell them apart" if needs else ""
    notes.append(
        f"CHOSEN: on {unclear[0]['questions']:,} questions the difference is not significant "
        f"(McNemar, p ≥ {unclear[0]['alpha']}) for {pairs}{more}"
    )


def _enough(scores: dict, what: str, notes: list[str]) -> dict | None:
    if not scores:
        return None
    if len(scores) < MIN_SYSTEMS:
        notes.append(f"{what}: only {len(scores)} systems also have human scores ({MIN_SYSTEMS} needed to correlate)")
        return None
    return scores


def _reference_metrics(campaign: Campaign, rated: dict, notes: list[str]) -> dict[str, dict[str, float]]:
    pairs = {}
    missing_references = 0
    for system, responses in campaign_responses(campaign=campaign).items():
        keys = rated.get(system) or responses  # the rated contexts; every response when none is rated
        chosen = [responses[k] for k in keys if k in responses]
        missing_references += sum(1 for _, refs in chosen if not refs)
        chosen = [(text, refs) for text, refs in chosen if refs]
        if chosen:
            pairs[system] = chosen
    if missing_references:
        notes.append(f"{missing_references} responses without a reference left out of BLEU, METEOR and ROUGE-L")
    if not pairs:
        return {}
    try:
        return system_scores(pairs, metrics=METRICS)
    except WordNetMissing as error:
        notes.append(f"METEOR left out: {error}")
        return system_scores(pairs, metrics=[m for m in METRICS if m != "METEOR"])


def _chosen(campaign: Campaign, systems: dict, notes: list[str]) -> tuple[dict, dict]:
    """CHOSEN accuracy per system, and the per-label / per-source pairwise accuracies."""
    local = [name for name, info in systems.items() if info["scored"]]
    breakdown: dict[str, dict] = {"per_label": {}, "per_source": {}}
    if campaign.testset_id is None:
        notes.append("no test set: no CHOSEN accuracies and no RANDOM trials")
        return {}, breakdown
    if not local:
        notes.append("no local systems: CHOSEN and RANDOM need systems that score candidates")
        return {}, breakdown
    found = {
        row["system__name"]: row
        for row in Evaluation.objects.filter(testset_id=campaign.testset_id, system__name__in=local).values(
            "system__name", "status", "summary", "error"
        )
    }
    chosen = {}
    for name in sorted(local):
        row = found.get(name)
        if row is None or row["status"] != EvaluationStatus.SUCCEEDED:
            state = "has no evaluation yet" if row is None else f"evaluation is {row['status']}"
            error = (row or {}).get("error", "").strip().splitlines()
            notes.append(f"CHOSEN: {name} {state}" + (f" ({error[0]})" if error else ""))
            continue
        summary = row["summary"]
        ci = summary.get("ci95") or [None, None]
        chosen[name] = {
            "accuracy": summary["accuracy"],
            "ci_low": ci[0],
            "ci_high": ci[1],
            "questions": summary.get("questions"),
            "chance": summary.get("chance"),
        }
        for part in ("per_label", "per_source"):
            for key, cell in (summary.get(part) or {}).items():
                breakdown[part].setdefault(key, {})[name] = {
                    "accuracy": cell.get("accuracy"),
                    "false_candidates": cell.get("false_candidates"),
                    "ci95": cell.get("ci95"),
                }
    breakdown = {part: dict(sorted(rows.items())) for part, rows in breakdown.items()}
    return chosen, breakdown


def _random(campaign: Campaign, systems: dict, notes: list[str]) -> tuple[dict, list[dict]]:
    """Per system: RANDOM mean/min/max; per complete trial (every RANDOM system done): the accuracies."""
    if campaign.testset_id is None or not any(info["scored"] for info in systems.values()):
        return {}, []
    if campaign.repository_id is None:
        notes.append("no repository: no RANDOM trials")
        return {}, []
    by_trial: dict[int, dict[str, float]] = {}
    per_system: dict[str, list[float]] = {}
    for name, trial, questions, correct in RandomTrialResult.objects.filter(campaign=campaign).values_list(
        "system__name", "trial", "questions", "correct"
    ):
        accuracy = correct / questions if questions else math.nan
        by_trial.setdefault(trial, {})[name] = accuracy
        per_system.setdefault(name, []).append(accuracy)
    if not per_system:
        notes.append("no RANDOM trials yet: run the campaign")
        return {}, []
    complete = [by_trial[t] for t in sorted(by_trial) if set(by_trial[t]) == set(per_system)]
    if len(complete) < max(len(v) for v in per_system.values()) or len(complete) < campaign.random_trials:
        notes.append(
            f"RANDOM: {len(complete)} of {campaign.random_trials} trials done for every system; correlations use those"
        )
    stats = {
        name: {"mean": sum(v) / len(v), "min": min(v), "max": max(v), "trials": len(v)}
        for name, v in per_system.items()
    }
    return stats, complete


def _split_half_trials(campaign: Campaign) -> int:
    # the bound averages as many random halvings as there are bootstrap resamples (0 turns the CIs off, not the bound)
    return campaign.bootstrap_resamples or 1000


def _split_half(rated: dict, campaign: Campaign, notes: list[str]) -> dict | None:
    """The split-half bound on responses with the usual number of ratings (see split_half_ratings)."""
    ratings, note = split_half_ratings({s: list(r.values()) for s, r in rated.items()})
    if note:
        notes.append(note)
    if ratings is None or len(ratings) < MIN_SYSTEMS:
        return None
    trials = _split_half_trials(campaign)
    try:
        return {m: split_half_bound(ratings, m, trials=trials, seed=campaign.seed) for m in METHODS}
    except ValueError as error:
        notes.append(f"no split-half bound: {error}")
        return None


def split_half_ratings(ratings: dict[str, list[tuple]]) -> tuple[dict[str, list[tuple]] | None, str | None]:
    """Ratings with the same number ``k`` of annotator positions per response, as split_half_bound needs.

    ``k`` is the most common number of ratings per response (the larger on a tie); a response with
    fewer is left out of the bound (it still counts in the human score), one with more keeps its
    first ``k`` positions (imported files: annotators 0..k-1; collected: the lowest annotator ids).
    """
    counts = Counter(len(r) for per_response in ratings.values() for r in per_response)
    if not counts:
        return None, None
    k = max(counts, key=lambda n: (counts[n], n))
    if k < 2:
        return None, "no split-half bound: it needs at least 2 ratings per response"
    kept = {s: [tuple(r[:k]) for r in rs if len(r) >= k] for s, rs in ratings.items()}
    kept = {s: rs for s, rs in kept.items() if rs}
    fewer = sum(n for size, n in counts.items() if size < k)
    more = sum(n for size, n in counts.items() if size > k)
    note = None
    if fewer or more:
        note = (
            f"split-half bound on {k} ratings per response: {fewer} responses with fewer left out, "
            f"{more} with more keep their first {k}"
        )
    return kept, note


def _finite(value):
    """JSON for PostgreSQL's jsonb: NaN and infinities become None, tuples lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
