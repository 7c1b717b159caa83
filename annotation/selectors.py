"""Reads: filter decisions, previews, the dialogue as pages show it.

Annotators have selectors_annotators, a dataset's state as the workspace shows it selectors_dataset, agreement
selectors_agreement."""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Trim

from annotation.models import (
    Annotator,
    Candidate,
    Dataset,
    FilterRules,
    Question,
    Score,
    counted_scores_q,
)
from annotation.rules import (
    FALSE_PER_QUESTION,
    FalseDecision,
    GroundTruthDecision,
    QuestionPool,
    ScoreCounts,
    decide_ground_truth,
    plan_questions,
)
from annotation.selectors_agreement import dataset_agreement, score_category_table  # noqa: F401 (tests read them here)
from annotation.selectors_response_counts import response_counts_materialised, response_counts_table
from annotation.selectors_stopping import DeterministicDecider, decider_get, is_rejected, stopping_summary
from core.errors import UserError
from core.gc_pause import gc_paused


def question_open_candidates(*, question_id: int, dataset: Dataset, rules: FilterRules) -> list[int]:
    """Responses of the question that still need scores, ground truth included.

    Without adaptive stopping (and always for a rating dataset): every response with fewer than
    the planned number of scores. With it: only responses whose filter decision could still
    change; none at all once the ground truth is rejected (the question is dropped whatever its
    candidates score).
    """
    rows = list(_score_counts(where="c.question_id = %s", params=[question_id], rules=rules))
    return _open_ids(rows, decider=decider_get(dataset=dataset, rules=rules))


def questions_still_open(*, dataset: Dataset, rules: FilterRules, question_ids: list[int] | None = None) -> set[int]:
    """The dataset's questions (of ``question_ids``, or every one) with a response that still needs
    scores (question_open_candidates for many questions: one query, in id order)."""
    decider = decider_get(dataset=dataset, rules=rules)
    if question_ids is None:
        where = f"c.question_id IN (SELECT id FROM {Question._meta.db_table} WHERE dataset_id = %s)"
        return _still_open(_score_counts(where=where, params=[dataset.pk], rules=rules), decider=decider)
    still_open = set()
    for start in range(0, len(question_ids), 500):  # SQLite's bound on a statement's parameters
        chunk = list(question_ids[start : start + 500])
        where = f"c.question_id IN ({', '.join(['%s'] * len(chunk))})"
        still_open |= _still_open(_score_counts(where=where, params=chunk, rules=rules), decider=decider)
    return still_open


def _still_open(rows: Iterable[dict], *, decider: DeterministicDecider) -> set[int]:
    """The questions of ``rows`` (in question order) with a response that still needs scores."""
    still_open, rows_of_question, current = set(), [], None
    for row in rows:
        if row["question_id"] != current:
            if rows_of_question and _open_ids(rows_of_question, decider=decider):
                still_open.add(current)
            rows_of_question, current = [], row["question_id"]
        rows_of_question.append(row)
    if rows_of_question and _open_ids(rows_of_question, decider=decider):
        still_open.add(current)
    return still_open


def _dataset_score_counts(*, dataset: Dataset, rules: FilterRules) -> Iterator[dict]:
    """candidate_score_counts as streamed rows: the filter preview, the test-set build and the pool
    review read every response of a dataset, and the ORM's conversion of each row cost as much as
    the query (measured: 0.37 s of 0.75 s for 110,000 candidates). A server-side cursor where the
    database has them: 400,000 responses stream through without being held at once."""
    where = (
        f"c.question_id IN (SELECT id FROM {Question._meta.db_table} WHERE dataset_id = %s AND derived_from_id IS NULL)"
    )
    if table := response_counts_table(dataset_id=dataset.pk, rules=rules):
        sql = (
            f"SELECT c.id, c.question_id, c.is_ground_truth, c.source, c.n, c.acceptable, c.ungrammatical, c.low "
            f"FROM {table} c WHERE {where} ORDER BY c.question_id, c.id"
        )
        return _score_count_rows(sql, [dataset.pk], server_side=True)
    return _score_counts(where=where, params=[dataset.pk], rules=rules, server_side=True)


def _open_ids(rows: list[dict], *, decider: DeterministicDecider) -> list[int]:
    open_ids = []
    for row in rows:
        state = decider.state(row)
        if decider.adaptive and row["is_ground_truth"] and is_rejected(state):
            return []
        if state.open:
            open_ids.append(row["id"])
    return open_ids


def _score_counts(*, where: str, params: list, rules: FilterRules, server_side: bool = False) -> Iterator[dict]:
    """Per response (of the candidates ``where`` selects): its scores, and how many meet each rule's
    score condition; only counted scores (confirmed, of annotators whose scores are not excluded)
    count. In question and candidate order.

    Plain SQL because this runs twice for every unit handed out and taken back (the annotators' hot
    path): the ORM spent longer building the four filtered counts than the database took to run
    them. Portable SQL (SUM over CASE), the same on SQLite and PostgreSQL. The excluded annotators
    are a subquery, not a join inside the LEFT JOIN: SQLite materializes such a join over every
    score of the database first (1.3 s per question with 2 M scores, against milliseconds)."""
    candidate, score, annotator = Candidate._meta.db_table, Score._meta.db_table, Annotator._meta.db_table
    sql = f"""
        SELECT c.id, c.question_id, c.is_ground_truth, c.source, COUNT(s.id),
               SUM(CASE WHEN s.value >= %s THEN 1 ELSE 0 END),
               SUM(CASE WHEN s.value <= %s THEN 1 ELSE 0 END),
               SUM(CASE WHEN s.value <= %s THEN 1 ELSE 0 END)
        FROM {candidate} c
        LEFT JOIN {score} s ON s.candidate_id = c.id AND s.counted
          AND s.annotator_id IN (SELECT id FROM {annotator} WHERE NOT scores_excluded)
        WHERE {where}
        GROUP BY c.id, c.question_id, c.is_ground_truth, c.source
        ORDER BY c.question_id, c.id"""
    rule_params = [rules.acceptable_min_score, rules.ungrammatical_max_score, rules.ground_truth_low_max_score]
    return _score_count_rows(sql, rule_params + params, server_side=server_side)


def _score_count_rows(sql: str, params: list, *, server_side: bool) -> Iterator[dict]:
    """The rows of a query for (id, question, ground truth, source, n, acceptable, ungrammatical,
    low) as the deciders read them."""
    with connection.chunked_cursor() if server_side else connection.cursor() as rows_cursor:
        rows_cursor.execute(sql, params)
        while rows := rows_cursor.fetchmany(2000):  # a whole dataset streams through
            for pk, question_id, is_ground_truth, source, n, acceptable, ungrammatical, low in rows:
                yield {
                    "id": pk,
                    "question_id": question_id,
                    "is_ground_truth": bool(is_ground_truth),
                    "source": source,
                    "n_scores": n,
                    "n_acceptable": acceptable or 0,
                    "n_ungrammatical": ungrammatical or 0,
                    "n_low": low or 0,
                }


def testset_dataset_get(*, name: str, adds: str) -> Dataset:
    """The test-set dataset ``name``, to which a service ``adds`` something ("retrieved
    candidates"); an unknown name or a rating dataset is a UserError."""
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        raise UserError(f"no dataset {name!r}")
    if dataset.is_rating:
        raise UserError(f"dataset {dataset.name!r} rates generated responses 1-5; it takes no {adds}")
    return dataset


def ground_truths_present_check(*, dataset: Dataset, otherwise: str) -> None:
    """A UserError naming up to 10 of the dataset's original questions whose ground truth is blank
    (a service that edits ground truths refuses the dataset until they are fixed); ``otherwise``
    says what was therefore not done."""
    originals = Question.objects.filter(dataset=dataset, derived_from__isnull=True)
    blank = originals.annotate(trimmed=Trim("ground_truth")).filter(trimmed="").values_list("id", flat=True)[:10]
    if blank:
        raise UserError(
            f"dataset {dataset.name!r}: question(s) {', '.join(map(str, blank))} have an empty ground truth; "
            f"{otherwise}"
        )


def filter_rules_current() -> FilterRules:
    """The newest rules version (version 1, the paper's defaults, is created by a migration)."""
    return FilterRules.objects.order_by("-version").first() or FilterRules(version=0)


def filter_rules_get(*, version: int | None) -> FilterRules:
    if version is None:
        return filter_rules_current()
    return FilterRules.objects.get(version=version)


def filter_rules_stored(*, version: int | None = None) -> FilterRules:
    """The rules a test set records: version ``version``, or the newest. UserError when there is
    no such version, or no rules at all (a database whose migrations never created version 1):
    ``filter_rules_current`` then offers unsaved defaults, which a test set cannot point to."""
    if version is not None:
        rules = FilterRules.objects.filter(version=version).first()
        if rules is None:
            raise UserError(f"no filter rules version {version}")
        return rules
    rules = filter_rules_current()
    if rules.pk is None:
        raise UserError("no filter rules in this database: run `manage.py migrate`, which creates version 1")
    return rules


def candidate_score_counts(*, dataset: Dataset, rules: FilterRules) -> QuerySet:
    """Per candidate of the dataset's original questions: how many scores, and how many meet each
    rule's score condition. One aggregate query; only counted
    scores (models.scoring.counted_scores_q) count."""
    valid = counted_scores_q("scores__")
    return (
        Candidate.objects.filter(question__dataset=dataset, question__derived_from__isnull=True)
        .values("id", "question_id", "is_ground_truth", "source")
        .annotate(
            n_scores=Count("scores", filter=valid),
            n_acceptable=Count("scores", filter=valid & Q(scores__value__gte=rules.acceptable_min_score)),
            n_ungrammatical=Count("scores", filter=valid & Q(scores__value__lte=rules.ungrammatical_max_score)),
            n_low=Count("scores", filter=valid & Q(scores__value__lte=rules.ground_truth_low_max_score)),
        )
        .order_by("question_id", "id")
    )


def question_pools(*, dataset: Dataset, rules: FilterRules) -> dict[int, QuestionPool]:
    """Decisions for every original question of the dataset, in question order."""
    return {pool.question_id: pool for pool in question_pools_stream(dataset=dataset, rules=rules)}


def question_pools_stream(*, dataset: Dataset, rules: FilterRules) -> Iterator[QuestionPool]:
    """question_pools one pool at a time, in question order (one query, streamed). A response the
    dataset's probabilistic stopping stopped takes the decision all K scores would most likely give."""
    planned = dataset.annotators_per_item
    decider = decider_get(dataset=dataset, rules=rules, fresh=True)
    pool = None
    for row in _dataset_score_counts(dataset=dataset, rules=rules):
        if pool is None or pool.question_id != row["question_id"]:
            if pool is not None:
                yield pool
            pool = QuestionPool(question_id=row["question_id"])
        counts = ScoreCounts(row["n_scores"], row["n_acceptable"], row["n_ungrammatical"], row["n_low"])
        if row["is_ground_truth"]:
            pool.ground_truth_id = row["id"]
            pool.ground_truth = GroundTruthDecision(decider.state(row).decision)
            continue
        decision = FalseDecision(decider.state(row).decision)
        pool.decisions[decision] = pool.decisions.get(decision, 0) + 1
        if decision == FalseDecision.KEPT:
            pool.kept.append(row["id"])
        elif (
            decision == FalseDecision.ACCEPTABLE
            and decide_ground_truth(counts, rules, planned) == GroundTruthDecision.PASSED
        ):
            pool.acceptable_as_ground_truth.append(row["id"])
    if pool is not None:
        yield pool


def dataset_stopping_summary(*, dataset: Dataset, rules: FilterRules, fresh: bool = True) -> dict:
    """selectors_stopping.stopping_summary over every response of the dataset's original questions
    (``fresh=False``: the prior fitted moments ago, as the test-set build has just done)."""
    where = (
        f"c.question_id IN (SELECT id FROM {Question._meta.db_table} WHERE dataset_id = %s AND derived_from_id IS NULL)"
    )
    return stopping_summary(dataset=dataset, rules=rules, where=where, params=[dataset.pk], fresh=fresh)


@dataclass(frozen=True, slots=True)
class CandidateDecision:
    """A response of an original question and what the filter rules make of its scores so far."""

    id: int
    question_id: int
    is_ground_truth: bool
    source: str
    scores: int  # counted scores
    decision: str  # a FalseDecision, or for the ground truth a GroundTruthDecision


def candidate_decisions(
    *, dataset: Dataset, rules: FilterRules, question_id: int | None = None
) -> list[CandidateDecision]:
    """The rule decision of every response of the dataset's original questions (the filter
    preview's rules, per candidate), in question then candidate order; ``question_id``: of that
    question's responses only. One query."""
    decider = decider_get(dataset=dataset, rules=rules)
    decisions = []
    if question_id is None:
        rows = _dataset_score_counts(dataset=dataset, rules=rules)
    else:
        rows = _score_counts(where="c.question_id = %s", params=[question_id], rules=rules)
    for row in rows:
        decisions.append(
            CandidateDecision(
                id=row["id"],
                question_id=row["question_id"],
                is_ground_truth=row["is_ground_truth"],
                source=row["source"],
                scores=row["n_scores"],
                decision=decider.state(row).decision,
            )
        )
    return decisions


@dataclass
class FilterPreview:
    dataset: str
    rules_version: int
    false_per_question: int
    questions: int = 0
    candidates: int = 0
    candidates_by_decision: dict[str, int] = field(default_factory=dict)
    questions_by_ground_truth: dict[str, int] = field(default_factory=dict)
    questions_too_few_false: int = 0
    buildable_questions: int = 0
    buildable_derived_questions: int = 0

    @classmethod
    def start(cls, *, dataset: Dataset, rules: FilterRules, false_per_question: int) -> "FilterPreview":
        """A preview of no question yet, to which ``add`` counts each pool."""
        preview = cls(dataset=dataset.name, rules_version=rules.version, false_per_question=false_per_question)
        preview.candidates_by_decision = {d.value: 0 for d in FalseDecision}
        preview.questions_by_ground_truth = {d.value: 0 for d in GroundTruthDecision}
        return preview

    def add(self, pool: QuestionPool) -> None:
        self.questions += 1
        self.questions_by_ground_truth[pool.ground_truth] += 1
        for decision, n in pool.decisions.items():
            self.candidates_by_decision[decision] += n
            self.candidates += n
        if pool.ground_truth == GroundTruthDecision.PASSED and len(pool.kept) < self.false_per_question:
            self.questions_too_few_false += 1
        plan = plan_questions(pool, false_per_question=self.false_per_question)
        self.buildable_questions += len(plan)
        self.buildable_derived_questions += sum(1 for p in plan if p.derived)

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def nothing_buildable_reason(self) -> str:
        """Why a test set built now would have no question ("" when it would have some): how many
        questions wait for scores on their ground truth, lost it to the rules, or keep too few
        false candidates."""
        if self.buildable_questions:
            return ""
        k = self.false_per_question
        head = (
            f"dataset {self.dataset!r}: no question passes the rules with {k} false candidates "
            f"(rules version {self.rules_version})"
        )
        if not self.questions:
            return f"{head}: the dataset has no questions"
        by_gt = self.questions_by_ground_truth
        parts = [
            (by_gt.get(GroundTruthDecision.UNDECIDED, 0), "ground truth still undecided (more scores needed)"),
            (by_gt.get(GroundTruthDecision.REJECTED, 0), "ground truth rejected by the rules"),
            (self.questions_too_few_false, f"fewer than {k} false candidates kept"),
        ]
        reasons = "; ".join(f"{n:,} with {what}" for n, what in parts if n)
        undecided = self.candidates_by_decision.get(FalseDecision.UNDECIDED, 0)
        tail = f" ({undecided:,} false candidates still undecided)" if undecided else ""
        return f"{head}. Of {self.questions:,} questions: {reasons}{tail}."


@gc_paused()
def filter_preview(
    *, dataset: Dataset, rules: FilterRules, false_per_question: int = FALSE_PER_QUESTION
) -> FilterPreview:
    """Dry run of the filter rules and the question builder: what each rule removes and how many
    questions a test set built now would have."""
    preview = FilterPreview.start(dataset=dataset, rules=rules, false_per_question=false_per_question)
    # The prior and the decisions from one aggregation of the scores
    with response_counts_materialised(dataset=dataset, rules=rules):
        for pool in question_pools_stream(dataset=dataset, rules=rules):
            preview.add(pool)
    return preview
