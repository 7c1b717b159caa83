"""A build's test-set candidates, written from its staging tables: each question's candidates in
an order shuffled with the seed and the question's id, with the counted scores they have now
(frozen: later annotation changes neither the test set nor its exported bytes).

Two ways to the same rows, chosen by database (``candidate_rows_writer``):

- ``StreamedCandidateRows`` (any database): one query streams every score of every chosen
  candidate (900,000 rows at 100,000 questions), and Python groups them into each candidate's
  scores and writes the rows in bulk.
- ``AggregatedCandidateRows`` (PostgreSQL): Python computes only each question's shuffled order
  (a staged slot per candidate) and the server writes the rows with one INSERT ... SELECT that
  aggregates each candidate's scores into its JSON; no score row leaves the server.

Either way the scores of a candidate are ``[["provider:external id", value], ...]`` by annotator
id, and the rows' keys follow (question position, rank).
"""

import json
import random
from collections.abc import Iterable

from django.db import connection

from annotation.models import Annotator, Score
from core.bulk import BulkWriter, ModelRows
from testsets.models import TestSet, TestSetCandidate, TestSetQuestion

_FETCH = 100_000  # rows per fetch (the streamed writer's score rows: about 5,000 questions)
_SLOTS = "wellchosen_testset_stage_slots"


def shuffled_order(*, seed: int, question_id: int, n: int) -> list[int]:
    """The position of each of a question's ``n`` candidates (by rank: the ground truth first)."""
    order = list(range(n))
    random.Random(f"{seed}:{question_id}:order").shuffle(order)
    return order


class CandidateRows:
    """Writes the staged candidates (``staged``: position, rank, candidate_id) of ``testset``; returns
    (candidates written, scores frozen into them)."""

    def __init__(self, writer: BulkWriter, *, staged: str) -> None:
        self.writer, self.staged = writer, staged

    def write(self, *, testset: TestSet) -> tuple[int, int]:
        raise NotImplementedError


class StreamedCandidateRows(CandidateRows):
    def write(self, *, testset: TestSet) -> tuple[int, int]:
        rows = ModelRows(TestSetCandidate, ["item_id", "candidate_id", "position", "is_ground_truth", "scores"])
        tsq, score, annotator = TestSetQuestion._meta.db_table, Score._meta.db_table, Annotator._meta.db_table
        sql = (
            "SELECT tsq.id, tsq.question_id, sc.rank, sc.candidate_id, a.provider, a.external_id, s.value "
            f"FROM {self.staged} sc JOIN {tsq} tsq ON tsq.testset_id = %s AND tsq.position = sc.position "
            # not "LEFT JOIN (score JOIN annotator)": SQLite materializes that join of every score
            f"LEFT JOIN {score} s ON s.candidate_id = sc.candidate_id AND s.counted "
            f"AND s.annotator_id IN (SELECT id FROM {annotator} WHERE NOT scores_excluded) "
            f"LEFT JOIN {annotator} a ON a.id = s.annotator_id "
            "ORDER BY sc.position, sc.rank, s.annotator_id"
        )
        candidates, self.scores = 0, 0  # the scores: counted as _shuffled writes them
        # One query, streamed (one join over the scores, not an index probe per candidate); each
        # fetch is written but for its last question, whose rows may go on in the next one.
        with connection.chunked_cursor() as cursor:
            cursor.execute(sql, [testset.pk])
            pending: list[tuple] = []
            while fetched := cursor.fetchmany(_FETCH):
                pending += fetched
                cut = len(pending)
                while cut and pending[cut - 1][0] == pending[-1][0]:
                    cut -= 1
                candidates += self.writer.insert(rows, self._rows(pending[:cut], seed=testset.seed))
                pending = pending[cut:]
            candidates += self.writer.insert(rows, self._rows(pending, seed=testset.seed))
        return candidates, self.scores

    def _rows(self, fetched: list[tuple], *, seed: int):
        """(item, candidate, position, is ground truth, scores) from the rows of a block, which come
        ordered by question, rank and annotator."""
        item: list = []  # the current question's [item id, question id, [[candidate id, scores], ...]]
        for item_id, question_id, rank, candidate_id, provider, external_id, value in fetched:
            if not item or item[0] != item_id:
                yield from self._shuffled(item, seed=seed)
                item = [item_id, question_id, []]
            chosen = item[2]
            if rank == len(chosen):
                chosen.append((candidate_id, []))
            if value is not None:
                chosen[rank][1].append([f"{provider}:{external_id}", value])
        yield from self._shuffled(item, seed=seed)

    def _shuffled(self, item: list, *, seed: int):
        if not item:
            return
        item_id, question_id, chosen = item
        order = shuffled_order(seed=seed, question_id=question_id, n=len(chosen))
        for rank, ((candidate_id, scores), position) in enumerate(zip(chosen, order, strict=True)):
            self.scores += len(scores)
            yield (item_id, candidate_id, position, rank == 0, json.dumps(scores))


class AggregatedCandidateRows(CandidateRows):
    def write(self, *, testset: TestSet) -> tuple[int, int]:
        tsq, score, annotator = TestSetQuestion._meta.db_table, Score._meta.db_table, Annotator._meta.db_table
        with self.writer.temporary_table(
            _SLOTS,
            {"position": "integer NOT NULL", "rank": "integer NOT NULL", "slot": "integer NOT NULL"},
            primary_key=["position", "rank"],
        ):
            # each question's (position, id, candidates), a fetch at a time: memory stays flat
            with connection.chunked_cursor() as cursor:
                cursor.execute(
                    f"SELECT tsq.position, tsq.question_id, COUNT(*) FROM {tsq} tsq "
                    f"JOIN {self.staged} sc ON sc.position = tsq.position WHERE tsq.testset_id = %s "
                    "GROUP BY tsq.position, tsq.question_id",
                    [testset.pk],
                )
                while questions := cursor.fetchmany(_FETCH):
                    slots = self._slots(questions, seed=testset.seed)
                    self.writer.insert_into(_SLOTS, ["position", "rank", "slot"], slots)
            self.writer.analyze(_SLOTS)
            with connection.cursor() as cursor:
                cursor.execute(
                    f"""WITH written AS (
                        INSERT INTO {TestSetCandidate._meta.db_table}
                            (item_id, candidate_id, position, is_ground_truth, scores)
                        SELECT tsq.id, sc.candidate_id, slot.slot, sc.rank = 0, COALESCE(frozen.scores, '[]'::jsonb)
                        FROM {self.staged} sc
                        JOIN {tsq} tsq ON tsq.testset_id = %s AND tsq.position = sc.position
                        JOIN {_SLOTS} slot ON slot.position = sc.position AND slot.rank = sc.rank
                        LEFT JOIN (
                            SELECT s.candidate_id, jsonb_agg(
                                jsonb_build_array(a.provider || ':' || a.external_id, s.value) ORDER BY s.annotator_id
                            ) AS scores
                            FROM {score} s JOIN {annotator} a ON a.id = s.annotator_id AND NOT a.scores_excluded
                            WHERE s.counted AND s.candidate_id IN (SELECT candidate_id FROM {self.staged})
                            GROUP BY s.candidate_id
                        ) frozen ON frozen.candidate_id = sc.candidate_id
                        ORDER BY sc.position, sc.rank
                        RETURNING jsonb_array_length(scores) AS n
                    )
                    SELECT COUNT(*), COALESCE(SUM(n), 0) FROM written""",
                    [testset.pk],
                )
                candidates, scores = cursor.fetchone()
        return int(candidates), int(scores)

    @staticmethod
    def _slots(questions: Iterable[tuple], *, seed: int):
        for position, question_id, n in questions:
            for rank, slot in enumerate(shuffled_order(seed=seed, question_id=question_id, n=n)):
                yield (position, rank, slot)


def candidate_rows_writer(writer: BulkWriter, *, staged: str) -> CandidateRows:
    """The way this database writes a build's candidates."""
    cls = AggregatedCandidateRows if connection.vendor == "postgresql" else StreamedCandidateRows
    return cls(writer, staged=staged)
