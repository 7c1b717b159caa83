"""Reads for evaluations: what a test set asks, and what a system answered."""

import re
from collections import defaultdict

from annotation.models import Context, DatasetTask, Question, Score, Turn, counted_scores_q
from evaluation.human import system_human_scores
from evaluation.models import (
    CandidateResult,
    Evaluation,
    GeneratedResponse,
    Generation,
    QuestionResult,
    ResponseRating,
)
from testsets.models import TestSetCandidate, TestSetQuestion


def context_turns(*, context_ids) -> defaultdict[int, list[str]]:
    """Turn texts per context, oldest first, in one query. ``context_ids``: ids, or a ``values()``
    subquery (which keeps a long id list out of SQLite's limit on query parameters)."""
    turns: defaultdict[int, list[str]] = defaultdict(list)
    for context_id, text in (
        Turn.objects.filter(context_id__in=context_ids)
        .order_by("context_id", "position")
        .values_list("context_id", "text")
    ):
        turns[context_id].append(text)
    return turns


def pending_items(*, evaluation: Evaluation):
    """Questions of the evaluation's test set that have no result yet, in the test set's order."""
    done = QuestionResult.objects.filter(evaluation=evaluation).values("item_id")
    return TestSetQuestion.objects.filter(testset_id=evaluation.testset_id).exclude(id__in=done).order_by("position")


def items_with_texts(*, item_ids: list[int]) -> list[dict]:
    """Per test-set question: its context turns and its candidates in the test set's order."""
    items = list(TestSetQuestion.objects.filter(id__in=item_ids).values("id", "position", "question__context_id"))
    turns = context_turns(context_ids={i["question__context_id"] for i in items})
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
    """One row per scored candidate: question, loss, summed log-prob, ground truth or not, source;
    in the test set's order (not the order the results were written in, which depends on which
    worker scored what), so that the bootstrap intervals computed from them do not."""
    return list(
        CandidateResult.objects.filter(question__evaluation=evaluation)
        .order_by("question__item__position", "candidate__position")
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


# What the annotator page's rating task asks (annotation.views.annotate.RATING_GUIDELINES).
COLLECTED_ASPECT = "appropriateness"


def human_ratings(
    *, generation_ids: list[int], aspect: str = "appropriateness"
) -> dict[str, dict[str, list[tuple[str, float]]]]:
    """``{system: {context_key: [(annotator_key, rating), ...]}}`` for the generations' responses.

    Two sources, merged: imported ``ResponseRating`` rows of ``aspect`` (annotator keys as in the
    file), and ratings collected here, the ``Score`` rows on a response's candidate in a rating
    dataset (annotator key ``a<annotator id>``; the "rate this response" task asks for
    appropriateness, :data:`COLLECTED_ASPECT`, so they count for that aspect only). Only counted
    scores (confirmed, of annotators whose scores are not excluded) count. Attention checks never appear: their answer
    is kept on the assignment (``Assignment.check_value``), never as a Score. Responses without any
    rating are left out; each response's ratings are in annotator-key order (numbers in keys
    compared as numbers). At most two queries, whatever the number of ratings.
    """
    ratings: dict[str, dict[str, list[tuple[str, float]]]] = defaultdict(lambda: defaultdict(list))
    imported = ResponseRating.objects.filter(response__generation_id__in=generation_ids, aspect=aspect).values_list(
        "response__generation__system__name", "response__context_key", "annotator_key", "value"
    )
    # One filter() call: the values below reuse its join to the (shared) candidate's responses, so a
    # score counts once for each response of these generations that its candidate stands for.
    collected = GeneratedResponse.objects.filter(
        counted_scores_q("candidate__scores__"),
        generation_id__in=generation_ids,
        candidate__question__dataset__task=DatasetTask.RATE,
    ).values_list(
        "generation__system__name", "context_key", "candidate__scores__annotator_id", "candidate__scores__value"
    )
    for system, context_key, annotator_key, value in imported:
        ratings[system][context_key].append((annotator_key, float(value)))
    if aspect == COLLECTED_ASPECT:
        for system, context_key, annotator_id, value in collected:
            ratings[system][context_key].append((f"a{annotator_id}", float(value)))
    return {
        system: {key: sorted(pairs, key=_annotator_order) for key, pairs in sorted(by_context.items())}
        for system, by_context in sorted(ratings.items())
    }


def _annotator_order(pair: tuple[str, float]) -> list:
    """ "a2" before "a10", "1" before "10": imported keys are positions in the file."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", pair[0])]


def human_rating_values(ratings: dict[str, dict[str, list[tuple[str, float]]]]) -> dict[str, list[list[float]]]:
    """``human_ratings`` in the shape ``evaluation.human.system_human_scores`` takes:
    ``{system: [ratings of response 1, ratings of response 2, ...]}``."""
    return {
        system: [[value for _, value in pairs] for pairs in by_context.values()]
        for system, by_context in ratings.items()
    }


def system_human_scores_from_db(*, generation_ids: list[int], aspect: str = "appropriateness") -> dict[str, float]:
    """System human score: the mean over its rated responses of the mean annotator rating.

    Systems without any rated response are left out. Which contexts to compare systems on (e.g.
    only those rated for every system) is the caller's choice: filter ``human_ratings`` first."""
    return system_human_scores(human_rating_values(human_ratings(generation_ids=generation_ids, aspect=aspect)))


def generation_questions(*, generation: Generation):
    """The questions a generation answers: its dataset's questions that are not derived (a derived
    question shares its original's context, so one response serves both)."""
    return Question.objects.filter(dataset_id=generation.dataset_id, derived_from__isnull=True)


def unanswered_questions(*, generation: Generation):
    """The generation's questions without a response yet."""
    answered = GeneratedResponse.objects.filter(generation=generation, question__isnull=False).values("question_id")
    return generation_questions(generation=generation).exclude(id__in=answered)


def pending_generation_questions(*, generation: Generation) -> list[dict]:
    """Questions without a response yet, with their context turns (oldest first) and ground truth."""
    return generation_contexts(generation=generation)


def generation_contexts(
    *, generation: Generation, pending: bool = True, question_ids: list[int] | None = None
) -> list[dict]:
    """The generation's questions (``pending``: those without a response yet; ``question_ids``:
    those only), by id, with their context turns (oldest first), ground truth and context key."""
    questions = unanswered_questions(generation=generation) if pending else generation_questions(generation=generation)
    if question_ids is not None:
        questions = questions.filter(id__in=question_ids)
    rows = list(questions.order_by("id").values("id", "context_id", "ground_truth"))
    if not rows:
        return []
    if question_ids is None:  # a subquery: a dataset's ids would pass SQLite's limit on parameters
        context_ids = Context.objects.filter(dataset_id=generation.dataset_id).values("id")
    else:
        context_ids = {q["context_id"] for q in rows}
    turns = context_turns(context_ids=context_ids)
    return [{**q, "key": f"q{q['id']}", "turns": turns[q["context_id"]]} for q in rows]


def dataset_evaluations(*, dataset, limit: int = 5) -> tuple[dict[str, int], list[dict]]:
    """The evaluations on the dataset's test sets: how many by status, and the newest ``limit``
    (system, test set, status, accuracy, whether the system is a toy model). Two queries."""
    from django.db.models import Count

    evaluations = Evaluation.objects.filter(testset__dataset=dataset)
    by_status = dict(evaluations.values_list("status").annotate(n=Count("id")).order_by())
    rows = [
        {
            "pk": pk,
            "system": system,
            "testset": testset,
            "status": status,
            "accuracy": summary.get("accuracy"),
            "ci95": summary.get("ci95"),
            "chance": summary.get("chance"),
            "toy_model": toy_model,
        }
        for pk, system, testset, status, summary, toy_model in evaluations.order_by("-created_at", "-id").values_list(
            "pk", "system__name", "testset__name", "status", "summary", "system__toy_model"
        )[:limit]
    ]
    return by_status, rows
