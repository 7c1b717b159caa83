"""Pair evaluations: is a system's loss lower on a pair's correct response than on its minimally
edited incorrect one (Okano et al.)?

Which pairs count: see :mod:`evaluation.selectors_pairs` (accepted by a reviewer, not dropped by
the annotators); pairs still pending review are not evaluated. A tie is not a preference: the pair
counts as wrong (a system giving every text the same loss scores 0, not 1).

Resumable and idempotent like :mod:`evaluation.services.evaluations`: pairs are scored in committed
batches, a pair with a result is never scored again, results are unique per (evaluation, pair),
and the results of a system edited since are discarded. Both responses of a pair are scored in one
call with their shared context, so a language model encodes the context once per pair.
"""

from collections import defaultdict

from django.db import transaction

from core.errors import UserError
from core.models import Job
from core.services.jobs import JobProgress
from evaluation.job_params import EvaluatePairsParams
from evaluation.metrics.accuracy import MIN_PAIRS_TO_RANK, PAIR_CHANCE, accuracy_summary
from evaluation.models import PairEvaluation, PairResult, System
from evaluation.scoring import CandidateScore
from evaluation.scoring.loading import scorer_for
from evaluation.selectors_pairs import counted_pairs, pair_results, pair_set_counts, pairs_with_texts, pending_pairs
from evaluation.services.evaluation_shards import evaluation_shard_size, pair_shards_plan
from evaluation.services.system_runs import system_run_execute, system_run_start
from pairs.models import PairSet


def pair_evaluation_start(
    *,
    pair_set_name: str,
    system_name: str,
    created_by=None,
    enqueue: bool = True,
    batch_pairs: int = EvaluatePairsParams.default("batch_pairs"),
    device: str | None = None,
) -> tuple[PairEvaluation, Job | None]:
    """The evaluation of a system on a pair set, with a job to run or resume it.

    A finished evaluation of an unchanged system with every counted pair scored is returned as is
    (no job), its summary refreshed when pairs stopped counting since. Pairs accepted since it
    finished are scored by a new job; results of a system edited since are discarded first.
    """
    pair_set = PairSet.objects.filter(name=pair_set_name).first()
    if pair_set is None:
        raise UserError(f"no pair set {pair_set_name!r}")
    system = System.objects.filter(name=system_name).first()
    if system is None:
        raise UserError(f"no system {system_name!r}")
    counts = pair_set_counts(pair_set_id=pair_set.pk)
    if not counts["counted"]:
        raise UserError(
            f"pair set {pair_set.name} has no accepted pair to evaluate ({counts['pending_review']} pending review, "
            f"{counts['awaiting_annotators']} with the annotators, {counts['left_out']} rejected or dropped)"
        )
    with transaction.atomic():
        evaluation, _ = PairEvaluation.objects.select_for_update().get_or_create(pair_set=pair_set, system=system)
        job = system_run_start(
            run=evaluation,
            system=system,
            params=EvaluatePairsParams(evaluation_id=evaluation.pk, batch_pairs=batch_pairs, device=device),
            created_by=created_by,
            enqueue=enqueue,
            results_discard=PairResult.objects.filter(evaluation=evaluation).delete,
            is_complete=lambda: _is_complete(evaluation, counted=counts["counted"]),
        )
    return evaluation, job


def _is_complete(evaluation: PairEvaluation, *, counted: int) -> bool:
    """Every counted pair has its result; the summary is refreshed when pairs stopped counting since."""
    if pending_pairs(evaluation=evaluation).exists():
        return False
    if evaluation.summary.get("n") != counted:  # pairs rejected or dropped since
        evaluation.summary = pair_evaluation_summary(evaluation=evaluation)
        evaluation.save(update_fields=["summary"])
    return True


def pair_evaluation_run(
    *,
    evaluation_id: int,
    progress: JobProgress | None = None,
    batch_pairs: int = EvaluatePairsParams.default("batch_pairs"),
    device: str | None = None,
    job: Job | None = None,
) -> dict:
    """Score every counted pair without a result, then summarise. Returns the summary.

    With its ``job`` (and the job's progress), the pairs are scored in shards that any worker on
    the job's queue may run (pair_evaluation_shard_score); without, here in one piece. Either way
    the summary is computed from the stored results, in pair order."""
    evaluation = _evaluation_get(evaluation_id)
    size = evaluation_shard_size(batch_questions=batch_pairs)
    return system_run_execute(
        run=evaluation,
        job=job,
        progress=progress,
        plan=lambda: pair_shards_plan(evaluation=evaluation, size=size),
        phase="scoring pairs",
        unit="pairs",
        run_in_one_piece=lambda: _score_pending(evaluation, progress=progress, batch_pairs=batch_pairs, device=device),
        summarise=lambda: pair_evaluation_summary(evaluation=evaluation),
    )


def pair_evaluation_shard_score(
    *,
    evaluation_id: int,
    first_id: int,
    last_id: int,
    batch_pairs: int,
    device: str | None = None,
    progress=None,
) -> dict:
    """One shard of a pair evaluation job: score the counted pairs with ids ``first_id`` to
    ``last_id`` that have no result yet (those done are skipped). Returns its counts."""
    evaluation = _evaluation_get(evaluation_id)
    ids = {"id__gte": first_id, "id__lte": last_id}
    return _score_pending(evaluation, progress=progress, batch_pairs=batch_pairs, device=device, ids=ids)


def _evaluation_get(evaluation_id: int) -> PairEvaluation:
    evaluation = PairEvaluation.objects.select_related("system", "pair_set").filter(pk=evaluation_id).first()
    if evaluation is None:
        raise UserError(f"no pair evaluation #{evaluation_id}")
    return evaluation


def _score_pending(
    evaluation: PairEvaluation, *, progress, batch_pairs: int, device: str | None, ids: dict | None = None
) -> dict:
    """Score the counted pairs without a result (of the ids given, else all), in committed batches
    of consecutive ids."""
    ids = ids or {}
    pending = list(pending_pairs(evaluation=evaluation).filter(**ids).values_list("id", flat=True))
    total = counted_pairs(pair_set_id=evaluation.pair_set_id).filter(**ids).count()
    done = total - len(pending)
    report = {"pairs": total, "skipped_finished": done, "scored": len(pending)}
    if progress:
        progress.update(done=done, total=total, force=True, phase="scoring pairs", unit="pairs")
    if not pending:
        return report
    scorer = scorer_for(evaluation.system, device=device)  # loaded once per worker process
    for start in range(0, len(pending), batch_pairs):
        pairs = pairs_with_texts(pair_ids=pending[start : start + batch_pairs])
        scores = scorer.score([p["context"] for p in pairs], [[p["correct"], p["incorrect"]] for p in pairs])
        _save(evaluation, pairs, scores)
        done += len(pairs)
        if progress:
            progress.update(done=done, total=total, force=True)
    return report


def _save(evaluation: PairEvaluation, pairs: list[dict], scores: list[list[CandidateScore]]) -> None:
    PairResult.objects.bulk_create(
        [
            PairResult(
                evaluation=evaluation,
                pair_id=pair["id"],
                correct_loss=correct.loss,
                incorrect_loss=incorrect.loss,
                correct_sum_logprob=correct.sum_logprob,
                incorrect_sum_logprob=incorrect.sum_logprob,
                n_tokens=correct.n_tokens,
                correct=correct.loss < incorrect.loss,
            )
            for pair, (correct, incorrect) in zip(pairs, scores, strict=True)
        ],
        ignore_conflicts=True,  # a pair another worker finished keeps its result
    )


# a pair is two responses, one appropriate: a coin picks it half the time


def pair_evaluation_summary(*, evaluation: PairEvaluation, seed: int = 0) -> dict:
    """Correctness on the counted pairs with a bootstrap 95 % interval: overall, per type, per
    ``type/subtype`` and per criterion (substituted content words); the same under the summed
    log-prob rule when every result has one; and how many pairs of the set wait or are left out."""
    rows = pair_results(evaluation=evaluation)
    summary = {
        "system": evaluation.system.name,
        "pair_set": evaluation.pair_set.name,
        **_cell([r["correct"] for r in rows], seed=seed),
        "chance": PAIR_CHANCE,
        "pair_set_counts": pair_set_counts(pair_set_id=evaluation.pair_set_id),
    }
    groups = {"per_type": defaultdict(list), "per_subtype": defaultdict(list), "per_criterion": defaultdict(list)}
    for r in rows:
        groups["per_type"][r["pair__type"]].append(r["correct"])
        if r["pair__subtype"]:
            groups["per_subtype"][f"{r['pair__type']}/{r['pair__subtype']}"].append(r["correct"])
        if r["pair__criterion"]:
            groups["per_criterion"][r["pair__criterion"]].append(r["correct"])
    for part, group in groups.items():
        summary[part] = {key: _cell(values, seed=seed) for key, values in sorted(group.items())}
    if rows and all(r["correct_sum_logprob"] is not None and r["incorrect_sum_logprob"] is not None for r in rows):
        summary["sum_logprob_rule"] = _cell(
            [r["correct_sum_logprob"] > r["incorrect_sum_logprob"] for r in rows], seed=seed
        )
    return summary


def _cell(correct: list[bool], *, seed: int) -> dict:
    summary = accuracy_summary(correct, seed=seed)
    return {
        "n": summary["questions"],
        "correct": summary["correct"],
        "accuracy": summary["accuracy"],
        "ci95": summary["ci95"],
        "chance": PAIR_CHANCE,
        "too_few_to_rank": summary["questions"] < MIN_PAIRS_TO_RANK,
    }
