"""Selection-accuracy evaluations: a system picks the lowest-loss candidate of every question.

Resumable and idempotent: questions are scored in committed batches, a question with a result
is never scored again, and result rows are unique per (evaluation, question) and
(question result, candidate). Progress and cancellation go through the Job machinery.
"""

from collections import defaultdict

from django.db import transaction

from core.errors import UserError
from core.models import Job
from core.services.jobs import JobProgress
from evaluation.job_params import EvaluateParams
from evaluation.metrics.accuracy import accuracy_summary, chance_accuracy
from evaluation.models import CandidateResult, Evaluation, QuestionResult, System
from evaluation.scoring import CandidateScore, select
from evaluation.scoring.loading import scorer_for
from evaluation.selectors import candidate_labels, candidate_results, items_with_texts, pending_items
from evaluation.services.evaluation_shards import evaluation_shard_size, evaluation_shards_plan
from evaluation.services.system_runs import system_run_execute, system_run_start
from testsets.models import TestSet


def evaluation_start(
    *,
    testset_name: str,
    system_name: str,
    created_by=None,
    enqueue: bool = True,
    batch_questions: int = EvaluateParams.default("batch_questions"),
    device: str | None = None,
) -> tuple[Evaluation, Job | None]:
    """The evaluation of a system on a test set, with a job to run or resume it.

    A finished evaluation of an unchanged system is returned as is (no job). Results of a
    system edited since they were computed are discarded first.
    """
    testset = TestSet.objects.filter(name=testset_name).first()
    if testset is None:
        raise UserError(f"no test set {testset_name!r}")
    system = System.objects.filter(name=system_name).first()
    if system is None:
        raise UserError(f"no system {system_name!r}")
    with transaction.atomic():
        evaluation, _ = Evaluation.objects.select_for_update().get_or_create(testset=testset, system=system)
        job = system_run_start(
            run=evaluation,
            system=system,
            params=EvaluateParams(evaluation_id=evaluation.pk, batch_questions=batch_questions, device=device),
            created_by=created_by,
            enqueue=enqueue,
            results_discard=QuestionResult.objects.filter(evaluation=evaluation).delete,
            is_complete=lambda: True,  # a succeeded evaluation answered every question of its frozen test set
        )
    return evaluation, job


def evaluation_run(
    *,
    evaluation_id: int,
    progress: JobProgress | None = None,
    batch_questions: int = EvaluateParams.default("batch_questions"),
    device: str | None = None,
    job: Job | None = None,
) -> dict:
    """Score every unanswered question of the test set, then summarise. Returns the summary.

    With its ``job`` (and the job's progress), the questions are scored in shards that any worker
    on the job's queue may run (evaluation_shard_score); without, here in one piece. Either way the
    summary is computed from the stored results once every question has one."""
    evaluation = Evaluation.objects.select_related("system", "testset").filter(pk=evaluation_id).first()
    if evaluation is None:
        raise UserError(f"no evaluation #{evaluation_id}")
    size = evaluation_shard_size(batch_questions=batch_questions)

    def summarise() -> dict:
        _check_complete(evaluation)
        return evaluation_summary(evaluation=evaluation)

    return system_run_execute(
        run=evaluation,
        job=job,
        progress=progress,
        plan=lambda: evaluation_shards_plan(evaluation=evaluation, size=size),
        phase="scoring questions",
        unit="questions",
        run_in_one_piece=lambda: _score_pending(
            evaluation, progress=progress, batch_questions=batch_questions, device=device
        ),
        summarise=summarise,
    )


def evaluation_shard_score(
    *,
    evaluation_id: int,
    first_position: int,
    last_position: int,
    batch_questions: int,
    device: str | None = None,
    progress=None,
) -> dict:
    """One shard of an evaluation job: score the questions at test-set positions ``first_position``
    to ``last_position`` that have no result yet (those done are skipped). Returns its counts."""
    evaluation = Evaluation.objects.select_related("system", "testset").filter(pk=evaluation_id).first()
    if evaluation is None:
        raise UserError(f"no evaluation #{evaluation_id}")
    positions = {"position__gte": first_position, "position__lte": last_position}
    return _score_pending(
        evaluation, progress=progress, batch_questions=batch_questions, device=device, positions=positions
    )


def _score_pending(
    evaluation: Evaluation, *, progress, batch_questions: int, device: str | None, positions: dict | None = None
) -> dict:
    """Score the questions without a result (of the positions given, else all), in committed batches."""
    positions = positions or {}
    total = evaluation.testset.items.filter(**positions).count()
    pending = list(pending_items(evaluation=evaluation).filter(**positions).values_list("id", flat=True))
    done = total - len(pending)
    report = {"questions": total, "skipped_finished": done, "scored": len(pending)}
    if progress:
        progress.update(done=done, total=total, force=True, phase="scoring questions", unit="questions")
    if not pending:
        return report
    scorer = scorer_for(evaluation.system, device=device)  # loaded once per worker process
    for start in range(0, len(pending), batch_questions):
        items = items_with_texts(item_ids=pending[start : start + batch_questions])
        scores = scorer.score(
            [item["turns"] for item in items],
            [[c["candidate__text"] for c in item["candidates"]] for item in items],
        )
        _save(evaluation, items, scores)
        done += len(items)
        if progress:
            progress.update(done=done, total=total, force=True)
    return report


def _check_complete(evaluation: Evaluation) -> None:
    """Every question of the test set has its result (one each: questionresult_unique_item)."""
    missing = pending_items(evaluation=evaluation).count()
    if missing:
        raise UserError(f"evaluation #{evaluation.pk}: {missing} questions of the test set have no result")


def _save(evaluation: Evaluation, items: list[dict], scores: list[list[CandidateScore]]) -> None:
    with transaction.atomic():
        QuestionResult.objects.bulk_create(
            [
                QuestionResult(
                    evaluation=evaluation,
                    item_id=item["item_id"],
                    selected_position=item["candidates"][select(q)]["position"],
                    correct=item["candidates"][select(q)]["is_ground_truth"],
                )
                for item, q in zip(items, scores, strict=True)
            ],
            ignore_conflicts=True,  # a question another worker finished keeps its result
        )
        ids = dict(
            QuestionResult.objects.filter(evaluation=evaluation, item_id__in=[i["item_id"] for i in items]).values_list(
                "item_id", "id"
            )
        )
        CandidateResult.objects.bulk_create(
            [
                CandidateResult(
                    question_id=ids[item["item_id"]],
                    candidate_id=candidate["id"],
                    loss=score.loss,
                    sum_logprob=score.sum_logprob,
                    n_tokens=score.n_tokens,
                )
                for item, q in zip(items, scores, strict=True)
                for candidate, score in zip(item["candidates"], q, strict=True)
            ],
            ignore_conflicts=True,
        )


def evaluation_summary(*, evaluation: Evaluation, seed: int = 0) -> dict:
    """Accuracy with a bootstrap 95 % interval, under the loss rule and the summed log-prob rule,
    and how often the ground truth beats the false candidates of each source and error label."""
    rows = candidate_results(evaluation=evaluation)
    by_question: dict[int, list[dict]] = defaultdict(list)
    for row in rows:
        by_question[row["question_id"]].append(row)
    correct = list(
        QuestionResult.objects.filter(evaluation=evaluation)
        .order_by("item__position")
        .values_list("correct", flat=True)
    )
    summary = {
        "system": evaluation.system.name,
        "testset": evaluation.testset.name,
        **accuracy_summary(correct),
        # what picking a candidate at random scores on these questions, beside the accuracy
        "chance": chance_accuracy([len(q) for q in by_question.values()]),
    }
    if rows and all(r["sum_logprob"] is not None for r in rows):
        by_sum = [
            q[select([CandidateScore(r["loss"], r["sum_logprob"]) for r in q], rule="sum")][
                "candidate__is_ground_truth"
            ]
            for q in by_question.values()
        ]
        summary["sum_logprob_rule"] = accuracy_summary(by_sum)
    labels = candidate_labels(
        candidate_ids=[r["candidate__candidate_id"] for r in rows if not r["candidate__is_ground_truth"]]
    )
    per_source: dict[str, list[bool]] = defaultdict(list)
    per_label: dict[str, list[bool]] = defaultdict(list)
    for q in by_question.values():
        truth = [r for r in q if r["candidate__is_ground_truth"]]
        if not truth:
            continue
        for r in q:
            if r["candidate__is_ground_truth"]:
                continue
            beaten = truth[0]["loss"] < r["loss"]
            per_source[r["candidate__candidate__source"]].append(beaten)
            for label in labels.get(r["candidate__candidate_id"], ()):
                per_label[label].append(beaten)
    # "pairwise accuracy": share of false candidates of that kind with a higher loss than the ground truth
    summary["per_source"] = {s: _pairwise(v, seed=seed) for s, v in sorted(per_source.items())}
    summary["per_label"] = {s: _pairwise(v, seed=seed) for s, v in sorted(per_label.items())}
    return summary


def _pairwise(beaten: list[bool], *, seed: int) -> dict:
    summary = accuracy_summary(beaten, seed=seed)
    return {
        "false_candidates": summary["questions"],
        "ground_truth_preferred": summary["correct"],
        "accuracy": summary["accuracy"],
        "ci95": summary["ci95"],
    }
