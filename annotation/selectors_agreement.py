"""Reads: agreement of annotators over scores (a dataset's, a set of candidates', the site's)."""

from collections.abc import Sequence

import numpy as np
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Q, QuerySet

from annotation.agreement import N_CATEGORIES, agreement_summary
from annotation.models import Dataset, Score
from annotation.selectors_response_counts import VALUE_COLUMNS, response_counts_table


def score_category_table(*, scores: QuerySet) -> np.ndarray:
    """Items x 6 table: for each scored candidate, how many annotators gave 0, 1, ..., 5.

    Aggregated in the database: one row per candidate comes back, never one per score.
    """
    aggregates = {f"c{v}": Count("id", filter=Q(value=v)) for v in range(N_CATEGORIES)}
    rows = scores.values("candidate_id").annotate(**aggregates).order_by("candidate_id").values_list(*aggregates)
    # The query's rows as the driver gives them (integers): the ORM's per-row conversion of the
    # six counts cost more than the query at 400,000 candidates.
    sql, params = rows.query.sql_with_params()
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        table = np.fromiter(
            (v for chunk in iter(lambda: cursor.fetchmany(10000), []) for row in chunk for v in row), dtype=np.int64
        )
    return table.reshape(-1, N_CATEGORIES)


def response_category_table(*, table: str, where: str = "", params: Sequence = ()) -> np.ndarray:
    """score_category_table from the per-response counts of ``table`` (selectors_response_counts)
    of the candidates ``where`` selects (SQL on ``c``): the same rows, ordered by their counts
    rather than by candidate (the agreement does not depend on the order). The database sends each
    distinct row once with how many responses have it: a few hundred rows, not 400,000."""
    columns = ", ".join(VALUE_COLUMNS)
    condition = f" AND {where}" if where else ""
    sql = f"SELECT {columns}, COUNT(*) FROM {table} c WHERE c.n > 0{condition} GROUP BY {columns} ORDER BY {columns}"
    with connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        rows = np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, N_CATEGORIES + 1)
    return np.repeat(rows[:, :N_CATEGORIES], rows[:, N_CATEGORIES], axis=0)


def dataset_agreement(*, dataset: Dataset) -> dict:
    if table := response_counts_table(dataset_id=dataset.pk):
        counts = response_category_table(table=table)
    else:
        counts = score_category_table(scores=Score.objects.counted().filter(candidate__question__dataset=dataset))
    return {"dataset": dataset.name, **agreement_summary(counts)}


OVERALL_AGREEMENT_KEY = "wellchosen:agreement:overall"


def overall_agreement() -> dict | None:
    """The site-wide agreement the last quality refresh computed (None before the first one)."""
    return cache.get(OVERALL_AGREEMENT_KEY)


def candidates_agreement(*, candidate_ids: list[int]) -> dict:
    # Chunked: SQLite limits the number of query parameters.
    tables = []
    for start in range(0, len(candidate_ids), 5000):
        chunk = candidate_ids[start : start + 5000]
        tables.append(score_category_table(scores=Score.objects.counted().filter(candidate_id__in=chunk)))
    return agreement_summary(np.concatenate(tables) if tables else np.zeros((0, N_CATEGORIES), dtype=np.int64))
