"""Each response's counted scores, aggregated once for the reads of a whole dataset.

A test-set build reads every response of its dataset several times: the stopping prior, the
filter decisions, the stopping summaries, the per-source verdicts and the agreement. Each of those
reads aggregates every counted score of the dataset (2 M at 100,000 questions, two to three seconds
each on PostgreSQL). Inside ``response_counts_materialised`` the scores are aggregated once, into a
temporary table of one row per response, and those selectors read the table instead; the rows
they get are the same. Outside it, and for another dataset or other rules, they aggregate the
scores as before (the annotators' hot path reads a few responses at a time).

The table: every candidate of the dataset's questions, with its counted scores (confirmed ones of
annotators whose scores are not excluded): ``n``, how many meet each rule's score condition
(``acceptable``, ``ungrammatical``, ``low``, with the rules' thresholds) and how many have each
value (``v0`` .. ``v5``). Selectors read it as ``c`` with the candidate's ``id``, ``question_id``,
``is_ground_truth`` and ``source``, so their conditions on ``c`` apply unchanged.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import connection

from annotation.models import Annotator, Candidate, Dataset, FilterRules, Question, Score
from core.bulk import bulk_writer

RESPONSE_COUNTS_TABLE = "wellchosen_response_counts"
VALUE_COLUMNS = tuple(f"v{value}" for value in range(Score.MIN_VALUE, Score.MAX_VALUE + 1))
_COLUMNS = {
    "id": "bigint NOT NULL",
    "question_id": "bigint NOT NULL",
    "is_ground_truth": "boolean NOT NULL",
    "source": "varchar(16) NOT NULL",
    "n": "integer NOT NULL",
    "acceptable": "integer NOT NULL",
    "ungrammatical": "integer NOT NULL",
    "low": "integer NOT NULL",
    **{column: "integer NOT NULL" for column in VALUE_COLUMNS},
}

# (dataset id, the rules' thresholds) of the table while it exists
_materialised: ContextVar[tuple[int, dict[str, int]] | None] = ContextVar("response_counts", default=None)


@contextmanager
def response_counts_materialised(*, dataset: Dataset, rules: FilterRules) -> Iterator[None]:
    """The per-response counts of ``dataset`` under ``rules`` in a temporary table for the ``with``
    block (the scores as they are when it starts). Inside another such block it adds nothing: the
    reads use the outer table where it is theirs, and the scores otherwise."""
    if _materialised.get() is not None:
        yield
        return
    candidate, score, annotator, question = (
        Candidate._meta.db_table,
        Score._meta.db_table,
        Annotator._meta.db_table,
        Question._meta.db_table,
    )
    values = ", ".join(f"COALESCE(SUM(CASE WHEN s.value = {v} THEN 1 ELSE 0 END), 0)" for v in range(6))
    sql = f"""
        INSERT INTO {RESPONSE_COUNTS_TABLE} ({", ".join(_COLUMNS)})
        SELECT c.id, c.question_id, c.is_ground_truth, c.source, COUNT(s.id),
               COALESCE(SUM(CASE WHEN s.value >= %s THEN 1 ELSE 0 END), 0),
               COALESCE(SUM(CASE WHEN s.value <= %s THEN 1 ELSE 0 END), 0),
               COALESCE(SUM(CASE WHEN s.value <= %s THEN 1 ELSE 0 END), 0),
               {values}
        FROM {candidate} c
        LEFT JOIN {score} s ON s.candidate_id = c.id AND s.counted
          AND s.annotator_id IN (SELECT id FROM {annotator} WHERE NOT scores_excluded)
        WHERE c.question_id IN (SELECT id FROM {question} WHERE dataset_id = %s)
        GROUP BY c.id, c.question_id, c.is_ground_truth, c.source"""
    params = [rules.acceptable_min_score, rules.ungrammatical_max_score, rules.ground_truth_low_max_score, dataset.pk]
    writer = bulk_writer()
    with writer.temporary_table(RESPONSE_COUNTS_TABLE, _COLUMNS, primary_key=["id"]) as table:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
        writer.analyze(table)
        token = _materialised.set((dataset.pk, rules.thresholds()))
        try:
            yield
        finally:
            _materialised.reset(token)


def response_counts_table(*, dataset_id: int, rules: FilterRules | None = None) -> str | None:
    """The table's name when it holds ``dataset_id``'s responses (counted under ``rules``' thresholds
    when rules are given), else None: the caller aggregates the scores itself."""
    active = _materialised.get()
    if active is None or active[0] != dataset_id:
        return None
    if rules is not None and active[1] != rules.thresholds():
        return None
    return RESPONSE_COUNTS_TABLE
