"""The rows of a test set being built, written set-based from a staging table.

At 100,000 questions the builder held every pool, plan, model instance and score snapshot at once
(860 MB) and spent most of its time building ORM objects. Here the plan of each question goes to
two temporary tables as the filter decisions stream in (``plan``); the derived questions, the test
set's questions and its candidates are then written from them (INSERT ... SELECT, or bulk rows a
block of questions at a time where Python decides; the candidates, with their shuffled order and
frozen scores: candidate_rows.py).
"""

import random
from contextlib import contextmanager

from django.db import connection

from annotation.models import Candidate, Dataset, FilterRules, Question
from annotation.rules import plan_questions
from annotation.selectors import FilterPreview, question_pools_stream
from annotation.selectors_stopping import stopping_summary
from core.bulk import BulkWriter, ModelRows, bulk_writer
from testsets.models import TestSet, TestSetCandidate, TestSetQuestion
from testsets.shortcuts.balance import BalanceOptions

from .balance_plan import BalancePlan, balance_plan
from .candidate_rows import candidate_rows_writer

_QUESTIONS = "wellchosen_testset_stage_questions"
_CANDIDATES = "wellchosen_testset_stage_candidates"
_BLOCK = 5000  # questions per block of rows written
STOPPING_TESTSET_KEYS = ("decisions", "decisions_on_fewer_scores", "decisions_by_model", "expected_changed")


@contextmanager
def testset_stage():
    """A TestsetStage whose staging tables last for the ``with`` block (inside a transaction)."""
    writer = bulk_writer()
    with (
        writer.temporary_table(
            _QUESTIONS,
            {
                "position": "integer NOT NULL",
                "question_id": "bigint NOT NULL",  # the original question
                "ground_truth_id": "bigint NOT NULL",
                "derived": "boolean NOT NULL",
            },
            primary_key=["position"],
        ),
        writer.temporary_table(
            _CANDIDATES,
            {
                "position": "integer NOT NULL",  # the test set question's
                "rank": "integer NOT NULL",  # 0 for the ground truth, then the false candidates as chosen
                "candidate_id": "bigint NOT NULL",
            },
            primary_key=["position", "rank"],
        ),
    ):
        yield TestsetStage(writer)


class TestsetStage:
    def __init__(self, writer: BulkWriter) -> None:
        self.writer = writer
        self.questions = 0
        self.derived = 0
        self.candidates = 0
        self.scores = 0
        self.balance: dict | None = None  # the shortcut-aware choice's report

    def plan(
        self,
        *,
        dataset: Dataset,
        rules: FilterRules,
        false_per_question: int,
        seed: int,
        balance: BalanceOptions | None = None,
    ) -> FilterPreview:
        """Stage the questions the rules let through (§3.2, ``seed`` choosing among candidates)
        and return the preview of the same decisions. With ``balance``, every question's false
        candidates, derived questions' too, are chosen shortcut-aware among those the rules kept
        (balance_plan; every pool is held at once for that)."""
        preview = FilterPreview.start(dataset=dataset, rules=rules, false_per_question=false_per_question)
        questions: list[tuple] = []
        candidates: list[tuple] = []
        pools = question_pools_stream(dataset=dataset, rules=rules)

        def rng_for(question_id: int) -> random.Random:
            return random.Random(f"{seed}:{question_id}")

        shortcut_aware = BalancePlan()
        if balance is not None:
            pools = list(pools)
            shortcut_aware = balance_plan(
                pools, dataset=dataset, false_per_question=false_per_question, rng_for=rng_for, options=balance
            )
            self.balance = shortcut_aware.report
        for pool in pools:
            preview.add(pool)
            for planned in plan_questions(
                pool,
                false_per_question=false_per_question,
                rng=rng_for(pool.question_id),
                choice=shortcut_aware.choice,
                drop=shortcut_aware.drop,
            ):
                self.questions += 1
                self.derived += planned.derived
                questions.append((self.questions, pool.question_id, planned.ground_truth_id, planned.derived))
                candidates.extend(
                    (self.questions, rank, candidate_id)
                    for rank, candidate_id in enumerate((planned.ground_truth_id, *planned.false_ids))
                )
            if len(questions) >= _BLOCK:
                self._stage(questions, candidates)
                questions, candidates = [], []
        self._stage(questions, candidates)
        self.writer.analyze(_QUESTIONS, _CANDIDATES)
        return preview

    def _stage(self, questions: list[tuple], candidates: list[tuple]) -> None:
        self.writer.insert_into(_QUESTIONS, ["position", "question_id", "ground_truth_id", "derived"], questions)
        self.writer.insert_into(_CANDIDATES, ["position", "rank", "candidate_id"], candidates)

    def stopping_summary(self, *, dataset: Dataset, rules: FilterRules) -> dict:
        """How early the decisions of the staged responses (ground truths and chosen false
        candidates, each counted once) were made; the prior the plan's decisions were made with."""
        where = f"c.id IN (SELECT candidate_id FROM {_CANDIDATES})"
        summary = stopping_summary(dataset=dataset, rules=rules, where=where, params=[], audit=False, fresh=False)
        return {key: summary[key] for key in STOPPING_TESTSET_KEYS}

    def derived_questions_create(self, *, dataset: Dataset) -> None:
        """The derived questions the plan names and the dataset does not have yet (they are reused
        by later test sets), created in (original, ground truth) order."""
        question, candidate = Question._meta.db_table, Candidate._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT sq.question_id, sq.ground_truth_id, q.context_id, c.text FROM {_QUESTIONS} sq "
                f"JOIN {question} q ON q.id = sq.question_id JOIN {candidate} c ON c.id = sq.ground_truth_id "
                f"WHERE sq.derived AND NOT EXISTS (SELECT 1 FROM {question} d WHERE d.dataset_id = %s "
                "AND d.derived_from_id = sq.question_id AND d.derived_ground_truth_id = sq.ground_truth_id) "
                "ORDER BY sq.question_id, sq.ground_truth_id",
                [dataset.pk],
            )
            missing = cursor.fetchall()
        columns = ["id", "dataset_id", "context_id", "ground_truth", "derived_from_id", "derived_ground_truth_id"]
        self.writer.insert(
            ModelRows(Question, columns),
            [
                (question_id, dataset.pk, context_id, text, original_id, ground_truth_id)
                for question_id, (original_id, ground_truth_id, context_id, text) in zip(
                    self.writer.ids(Question, len(missing)), missing, strict=True
                )
            ],
        )

    def items_create(self, *, testset: TestSet) -> None:
        """The test set's questions: the original, or the derived question of its ground truth."""
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {TestSetQuestion._meta.db_table} (testset_id, question_id, position) "
                "SELECT %s, COALESCE(d.id, sq.question_id), sq.position "
                f"FROM {_QUESTIONS} sq LEFT JOIN {Question._meta.db_table} d ON sq.derived "
                "AND d.dataset_id = %s AND d.derived_from_id = sq.question_id "
                "AND d.derived_ground_truth_id = sq.ground_truth_id",
                [testset.pk, testset.dataset_id],
            )
        # Planned as just written (candidates_create joins them): else the planner takes the table
        # for empty and probes every score of the test set by index, twice as slow as one hash join.
        self.writer.analyze(TestSetQuestion._meta.db_table)

    def candidates_create(self, *, testset: TestSet) -> None:
        """Each question's candidates in an order shuffled with the seed and the question's id, with
        the counted scores they have now (frozen; candidate_rows.py)."""
        written, scores = candidate_rows_writer(self.writer, staged=_CANDIDATES).write(testset=testset)
        self.candidates += written
        self.scores += scores
        # The files' read joins them by question, a block at a time (testsets.items).
        self.writer.analyze(TestSetCandidate._meta.db_table)
