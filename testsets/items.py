"""Reading a frozen test set as every export format reads it: its questions in order, each with its
context turns and its candidates in the test set's order, streamed a chunk of questions at a time.
"""

import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db import connection

from annotation.models import Candidate, Question, Turn, Utterance
from testsets.models import TestSet, TestSetCandidate, TestSetQuestion

CHUNK = 5000


@dataclass(frozen=True, slots=True)
class ItemTurn:
    """A context turn as the exports read it."""

    speaker: str
    text: str
    original_text: str = ""  # as imported, where a normaliser changed it (read when asked for)


@dataclass(frozen=True, slots=True)
class ItemCandidate:
    """A candidate's stored fields as the exports read them (the Candidate model's names)."""

    id: int
    text: str
    is_ground_truth: bool
    source: str
    utterance_id: int | None
    retrieval_score: float | None
    rank: int | None
    retriever_version: str
    retrieval: list
    provenance: dict
    original_text: str = ""  # as imported (or as its utterance was), where a normaliser changed it

    @property
    def pk(self) -> int:
        return self.id


@dataclass(frozen=True, slots=True)
class TestSetItemCandidate:
    position: int
    is_ground_truth: bool
    scores: list  # [[annotator label, value], ...] as frozen at build time
    candidate: ItemCandidate


@dataclass(frozen=True, slots=True)
class TestSetItem:
    position: int
    question_id: int
    derived_from_id: int | None
    turns: list[ItemTurn]
    candidates: list[TestSetItemCandidate]  # in the test set's (shuffled) order

    @property
    def ground_truth(self) -> TestSetItemCandidate:
        return next(c for c in self.candidates if c.is_ground_truth)

    @property
    def false_candidates(self) -> list[TestSetItemCandidate]:
        return [c for c in self.candidates if not c.is_ground_truth]


def testset_items(testset: TestSet, *, chunk: int = CHUNK, original_text: bool = False) -> Iterator[TestSetItem]:
    """The test set's questions in order, three queries per ``chunk`` questions; with
    ``original_text``, each text's original too (``original_texts`` puts them in its place)."""
    for items in testset_item_chunks(testset, chunk=chunk, original_text=original_text):
        yield from items


def testset_item_chunks(
    testset: TestSet, *, chunk: int = CHUNK, original_text: bool = False
) -> Iterator[list[TestSetItem]]:
    """testset_items a list of ``chunk`` questions at a time.

    Plain SQL and tuples: at 100,000 questions the ORM's model instances (a TestSetCandidate and a
    Candidate per row) cost several times the queries, and every export reads the whole set."""
    tsq, tsc = TestSetQuestion._meta.db_table, TestSetCandidate._meta.db_table
    question, candidate, turn = Question._meta.db_table, Candidate._meta.db_table, Turn._meta.db_table
    # A retrieved candidate keeps its text in its utterance's style; the original is the utterance's.
    originals = (
        (", t.original_text", ", COALESCE(NULLIF(c.original_text, ''), u.original_text, '')")
        if original_text
        else ("", "")
    )
    utterance_join = f" LEFT JOIN {Utterance._meta.db_table} u ON u.id = c.utterance_id" if original_text else ""
    page = "tsq.testset_id = %s AND tsq.position >= %s AND tsq.position <= %s"
    last_position = -1
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                f"SELECT tsq.id, tsq.position, tsq.question_id, q.derived_from_id, q.context_id "
                f"FROM {tsq} tsq JOIN {question} q ON q.id = tsq.question_id "
                f"WHERE tsq.testset_id = %s AND tsq.position > %s ORDER BY tsq.position LIMIT %s",
                [testset.pk, last_position, chunk],
            )
            items = cursor.fetchall()
            if not items:
                return
            bounds = [testset.pk, items[0][1], items[-1][1]]
            last_position = items[-1][1]
            cursor.execute(
                f"SELECT t.context_id, t.speaker, t.text{originals[0]} FROM {turn} t WHERE t.context_id IN "
                f"(SELECT q.context_id FROM {tsq} tsq JOIN {question} q ON q.id = tsq.question_id WHERE {page}) "
                "ORDER BY t.context_id, t.position",
                bounds,
            )
            turns: dict[int, list[ItemTurn]] = {}
            for context_id, *fields in cursor.fetchall():
                turns.setdefault(context_id, []).append(ItemTurn(*fields))
            cursor.execute(
                "SELECT tsc.item_id, tsc.position, tsc.is_ground_truth, tsc.scores, c.id, c.text, c.is_ground_truth, "
                "c.source, c.utterance_id, c.retrieval_score, c.rank, c.retriever_version, c.retrieval, c.provenance"
                f"{originals[1]} FROM {tsc} tsc JOIN {tsq} tsq ON tsq.id = tsc.item_id "
                f"JOIN {candidate} c ON c.id = tsc.candidate_id{utterance_join} "
                f"WHERE {page} ORDER BY tsc.item_id, tsc.position",
                bounds,
            )
            candidates: dict[int, list[TestSetItemCandidate]] = {}
            for item_id, position, is_gt, scores, *c in cursor.fetchall():
                candidates.setdefault(item_id, []).append(
                    TestSetItemCandidate(
                        position,
                        bool(is_gt),
                        _json(scores),
                        ItemCandidate(
                            c[0], c[1], bool(c[2]), c[3], c[4], c[5], c[6], c[7], _json(c[8]), _json(c[9]), *c[10:]
                        ),
                    )
                )
            yield [
                TestSetItem(
                    position=position,
                    question_id=question_id,
                    derived_from_id=derived_from_id,
                    turns=turns.get(context_id, []),
                    candidates=candidates.get(item_id, []),
                )
                for item_id, position, question_id, derived_from_id, context_id in items
            ]


def original_texts(items: Iterable[TestSetItem]) -> Iterator[TestSetItem]:
    """The items of ``testset_items(..., original_text=True)`` with each text as it was imported,
    where a normaliser changed it (the others as they are)."""
    for item in items:
        yield dataclasses.replace(
            item,
            turns=[dataclasses.replace(t, text=t.original_text or t.text) for t in item.turns],
            candidates=[
                dataclasses.replace(
                    c,
                    candidate=dataclasses.replace(c.candidate, text=c.candidate.original_text or c.candidate.text),
                )
                for c in item.candidates
            ],
        )


def _json(value):
    """A JSON column's value (the drivers give its text; most candidates have no retrievers and
    no provenance)."""
    if value == "[]":
        return []
    if value == "{}":
        return {}
    return json.loads(value) if isinstance(value, str) else value
