"""Reads for evaluations: what a release asks, and what a system answered."""

from collections import defaultdict

from annotation.models import Score, TestSetCandidate, TestSetQuestion, Turn
from evaluation.models import CandidateResult, Evaluation, QuestionResult


def pending_items(*, evaluation: Evaluation):
    """Questions of the evaluation's release that have no result yet, in release order."""
    done = QuestionResult.objects.filter(evaluation=evaluation).values("item_id")
    return TestSetQuestion.objects.filter(testset_id=evaluation.testset_id).exclude(id__in=done).order_by("position")


def items_with_texts(*, item_ids: list[int]) -> list[dict]:
    """Per release question: its context turns and its candidates in release order."""
    items = list(TestSetQuestion.objects.filter(id__in=item_ids).values("id", "position", "question__context_id"))
    context_ids = {i["question__context_id"] for i in items}
    turns: dict[int, list[str]] = defaultdict(list)
    for context_id, text in (
        Turn.objects.filter(context_id__in=context_ids)
        .order_by("context_id", "position")
        .values_list("context_id", "text")
    ):
        turns[context_id].append(text)
    candidates: dict[int, list[dict]] = defaultdict(list)
    for row in (
        TestSetCandidate.objects.filter(item_id__in=item_ids)
        .order_by("item_id", "position")
        .values("id", "item_id", "position", "is_ground_truth", "candidate__text")
    ):
        candidates[row["item_id"]].append(row)
    return [
        {"item_id": i["id"], "turns": turns[i["question__context_id"]], "candidates": candidates[i["id"]]}
        for i in sorted(items, key=lambda i: i["position"])
    ]


def candidate_results(*, evaluation: Evaluation) -> list[dict]:
    """One row per scored candidate: question, loss, summed log-prob, ground truth or not, source."""
    return list(
        CandidateResult.objects.filter(question__evaluation=evaluation)
        .order_by("question_id", "candidate__position")
        .values(
            "question_id",
            "loss",
            "sum_logprob",
            "candidate__position",
            "candidate__is_ground_truth",
            "candidate__candidate__source",
            "candidate__candidate_id",
        )
    )


def candidate_labels(*, candidate_ids: list[int]) -> dict[int, set[str]]:
    """Error labels ("why is it wrong") any annotator gave a candidate."""
    labels: dict[int, set[str]] = defaultdict(set)
    for start in range(0, len(candidate_ids), 5000):  # SQLite limits query parameters
        for candidate_id, given in (
            Score.objects.filter(candidate_id__in=candidate_ids[start : start + 5000])
            .exclude(labels=[])
            .values_list("candidate_id", "labels")
        ):
            labels[candidate_id].update(given or [])
    return labels
