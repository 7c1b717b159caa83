"""Reads of a dataset's state as the workspace and the dashboard show it: progress of the
annotation, its corpus, units still to open. Aggregate queries only: the same
number of queries at any size."""

from datetime import timedelta

from django.db import connection
from django.db.models import Count, Exists, F, Max, OuterRef, Q, Sum
from django.utils import timezone

from annotation.models import (
    Annotator,
    Assignment,
    AssignmentStatus,
    Candidate,
    CandidateSource,
    Dataset,
    FilterRules,
    Question,
    QuestionWork,
    Score,
    counted_scores_q,
)
from annotation.selectors_response_counts import response_counts_table


def dataset_progress(*, dataset: Dataset) -> dict:
    """Live numbers for the dashboard, all database aggregates (a handful of queries at any size).

    Scores, submitted units and the rate are the ones that count as evidence (``counted_scores_q``:
    what the filter rules, adaptive stopping and test sets use); work a crowd platform has not
    confirmed yet, and scores of excluded annotators, are counted apart and never in them."""
    k = dataset.annotators_per_item
    work = QuestionWork.objects.filter(dataset=dataset).aggregate(
        units=Count("pk"),
        closed=Count("pk", filter=Q(is_open=False)),
        full=Count("pk", filter=Q(is_open=True, slots_taken__gte=F("slots_needed"))),
    )
    now = timezone.now()
    submitted = Q(status=AssignmentStatus.SUBMITTED)
    counted = Q(counts=True)
    assignments = (
        Assignment.objects.filter(question__dataset=dataset)
        .annotate(counts=Exists(Score.objects.filter(counted_scores_q(), assignment=OuterRef("pk"))))
        .aggregate(
            submitted=Count("id", filter=submitted & counted),
            not_counted=Count("id", filter=submitted & ~counted),
            not_counted_open=Count("id", filter=submitted & ~counted & Q(question__work__is_open=True)),
            leased=Count("id", filter=Q(status=AssignmentStatus.LEASED, leased_until__gte=now)),
            last_hour=Count("id", filter=submitted & counted & Q(submitted_at__gte=now - timedelta(hours=1))),
        )
    )
    candidates = Candidate.objects.filter(question__dataset=dataset, question__work__isnull=False).aggregate(
        all=Count("id"), closed=Count("id", filter=Q(question__work__is_open=False))
    )
    evidence = counted_scores_q()
    scores = Score.objects.filter(candidate__question__dataset=dataset).aggregate(
        all=Count("id", filter=evidence),
        closed=Count("id", filter=evidence & Q(candidate__question__work__is_open=False)),
        unconfirmed=Count("id", filter=Q(counted=False)),
        excluded=Count("id", filter=Q(counted=True, annotator__scores_excluded=True)),
        last=Max("created_at", filter=evidence),
    )
    # units still to be done: open slots, and the slots unconfirmed work holds (it may be discarded)
    open_slots = (
        QuestionWork.objects.filter(dataset=dataset, is_open=True).aggregate(
            left=Sum(F("slots_needed") - F("slots_taken"))
        )["left"]
        or 0
    )
    remaining_units = open_slots + assignments["not_counted_open"]
    rate = assignments["last_hour"]
    planned_closed = candidates["closed"] * k
    return {
        "units": work["units"],
        "units_done": work["closed"],
        "units_waiting": work["full"],  # every slot leased or submitted, some leases still out
        "units_open": work["units"] - work["closed"] - work["full"],
        "assignments_submitted": assignments["submitted"],
        "assignments_not_counted": assignments["not_counted"],  # submitted, no score counts (yet)
        "assignments_leased": assignments["leased"],
        "scores": scores["all"],
        "scores_unconfirmed": scores["unconfirmed"],  # waiting for a crowd platform's confirmation
        "scores_excluded": scores["excluded"],  # of annotators whose scores are excluded
        "scores_planned": candidates["all"] * k,
        "units_per_hour": rate,
        "eta_hours": round(remaining_units / rate, 1) if rate else None,
        "adaptive_saved": round(1 - scores["closed"] / planned_closed, 3) if planned_closed else None,
        "adaptive_saved_scores": planned_closed - scores["closed"] if planned_closed else 0,
        "last_score_at": scores["last"],  # when the newest counted score arrived (None without any)
    }


def attention_checks_status(*, dataset: Dataset) -> str:
    """How the dataset's units get attention checks, or why they get none (dashboard and admin)."""
    if not dataset.attention_check_rate:
        return "no attention checks (attention_check_rate is 0)"
    if dataset.attention_check_repository_id is None:
        return (
            "no attention checks: this dataset has no attention-check repository to draw unrelated "
            "utterances from (set one in the admin; building candidate pools sets it)"
        )
    return (
        f"attention checks in {dataset.attention_check_rate * 100:g} % of units, unrelated utterances of the "
        f"repository {dataset.attention_check_repository.name}"
    )


def dataset_corpus_counts(*, dataset: Dataset) -> dict:
    """The dataset's dialogues, questions and false candidates (by source): two aggregate queries
    for the workspace, whatever the dataset's size."""
    counts = Question.objects.filter(dataset=dataset).aggregate(
        questions=Count("id", filter=Q(derived_from__isnull=True)),
        derived=Count("id", filter=Q(derived_from__isnull=False)),
        dialogues=Count("context", distinct=True),
    )
    by_source = dict(
        Candidate.objects.filter(question__dataset=dataset, question__derived_from__isnull=True, is_ground_truth=False)
        .values_list("source")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {**counts, "false_candidates": sum(by_source.values()), "false_by_source": by_source}


def dataset_units_to_open(*, dataset: Dataset) -> int:
    """Original questions that are no unit of work yet (what annotation_open would add)."""
    return Question.objects.filter(dataset=dataset, derived_from__isnull=True, work__isnull=True).count()


def candidate_verdicts_by_source(*, dataset: Dataset, rules: FilterRules) -> list[dict]:
    """Per source of the dataset's false candidates (original questions): how many the annotators
    scored (``annotated``: at least one counted score), and of those how many the filter rules drop
    as ``acceptable`` (enough annotators found it a fitting response: a false negative) or as
    ``ungrammatical``, with the rules' precedence (ungrammatical first), so the two never overlap:
    what each source's candidates cost in annotation that no test set can use. ``complete``: those
    whose verdict is final (as annotation.rules.decide_false_candidate decides: a rule's count
    reached, or out of reach of the planned scores still to come); a candidate still being scored
    counts in ``annotated`` and in neither drop yet.

    One query, set-based: the scores are counted per candidate and the candidates per source in
    the database, whatever the dataset's size. Only counted scores count (``counted_scores_q``)."""
    candidate, score, annotator, question = (
        Candidate._meta.db_table,
        Score._meta.db_table,
        Annotator._meta.db_table,
        Question._meta.db_table,
    )
    originals = f"c.question_id IN (SELECT id FROM {question} WHERE dataset_id = %s AND derived_from_id IS NULL)"
    if table := response_counts_table(dataset_id=dataset.pk, rules=rules):
        per_candidate = f"""
            SELECT c.id, c.source, c.n, c.acceptable AS n_acceptable, c.ungrammatical AS n_ungrammatical
            FROM {table} c WHERE NOT c.is_ground_truth AND c.n > 0 AND {originals}"""
        per_candidate_params = [dataset.pk]
    else:
        per_candidate = f"""
            SELECT c.id, c.source, COUNT(s.id) AS n,
                   SUM(CASE WHEN s.value >= %s THEN 1 ELSE 0 END) AS n_acceptable,
                   SUM(CASE WHEN s.value <= %s THEN 1 ELSE 0 END) AS n_ungrammatical
            FROM {candidate} c
            JOIN {score} s ON s.candidate_id = c.id AND s.counted
              AND s.annotator_id IN (SELECT id FROM {annotator} WHERE NOT scores_excluded)
            WHERE NOT c.is_ground_truth AND {originals}
            GROUP BY c.id, c.source"""
        per_candidate_params = [rules.acceptable_min_score, rules.ungrammatical_max_score, dataset.pk]
    sql = f"""
        SELECT source, COUNT(*),
               SUM(CASE WHEN n_ungrammatical < %s AND n_acceptable >= %s THEN 1 ELSE 0 END),
               SUM(CASE WHEN n_ungrammatical >= %s THEN 1 ELSE 0 END),
               SUM(CASE WHEN n_acceptable >= %s OR n_ungrammatical >= %s
                          OR (n_acceptable + %s - n < %s AND n_ungrammatical + %s - n < %s) THEN 1 ELSE 0 END)
        FROM ({per_candidate}) per_candidate
        GROUP BY source
        ORDER BY source"""
    params = [
        rules.ungrammatical_min_count,
        rules.acceptable_min_count,
        rules.ungrammatical_min_count,
        rules.acceptable_min_count,
        rules.ungrammatical_min_count,
        dataset.annotators_per_item,
        rules.acceptable_min_count,
        dataset.annotators_per_item,
        rules.ungrammatical_min_count,
        *per_candidate_params,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    labels = dict(CandidateSource.choices)
    return [
        {
            "source": source,
            "label": labels.get(source, source),
            "annotated": annotated,
            "acceptable": acceptable or 0,
            "ungrammatical": ungrammatical or 0,
            "complete": complete or 0,
            "share_acceptable": (acceptable or 0) / annotated,
            "share_ungrammatical": (ungrammatical or 0) / annotated,
        }
        for source, annotated, acceptable, ungrammatical, complete in rows
    ]
