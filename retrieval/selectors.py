"""Reads: current search indexes and their open handles; the pool review page."""

import threading
from collections import Counter
from dataclasses import astuple, dataclass
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from annotation.models import Annotator, Candidate, CandidateSource, Dataset, FilterRules, Question, Repository, Score
from annotation.rules import FalseDecision, GroundTruthDecision
from annotation.selectors import CandidateDecision, candidate_decisions
from annotation.selectors_display import dialogue_turns_display
from core import readable
from core.errors import UserError
from retrieval.dense.backends import dense_backend
from retrieval.dense.base import DenseIndex
from retrieval.dense.encoder import get_encoder
from retrieval.lexical.base import LexicalBackend
from retrieval.models import ExclusionReason, IndexKind, IndexStatus, QuestionRetrieval, RetrievalIndex

_open: dict[tuple, object] = {}
_lock = threading.Lock()


def index_current(*, repository: Repository, kind: str) -> RetrievalIndex | None:
    """The newest ready index of that kind built from the repository's present content (and, for
    embeddings, with the configured model and dense search backend); None when there is none."""
    candidates = RetrievalIndex.objects.filter(
        repository=repository, kind=kind, status=IndexStatus.READY, content_version=repository.content_version
    ).order_by("-version")
    for index in candidates:
        if kind == IndexKind.DENSE and (
            index.backend != get_encoder().name
            or index.params.get("search", "faiss") != settings.WELLCHOSEN_DENSE_SEARCH
        ):
            continue
        if kind == IndexKind.LEXICAL and index.backend != (
            "elasticsearch" if settings.ELASTICSEARCH_URL else "tantivy"
        ):
            continue
        return index
    return None


def lexical_backend_for(index: RetrievalIndex) -> LexicalBackend:
    # The data directory is part of the key: tests give every test its own.
    key = ("lexical", index.backend, index.name, str(settings.WELLCHOSEN_DATA_DIR))
    with _lock:
        if key not in _open:
            if index.backend == "elasticsearch":
                from retrieval.lexical.elasticsearch_backend import ElasticsearchBackend

                _open[key] = ElasticsearchBackend(index_name=index.name, url=settings.ELASTICSEARCH_URL)
            else:
                from retrieval.lexical.tantivy_backend import TantivyBackend

                _open[key] = TantivyBackend(index_name=index.name)
        return _open[key]


def dense_index_for(index: RetrievalIndex) -> DenseIndex:
    key = ("dense", index.name)
    with _lock:
        if key not in _open:
            _open[key] = dense_backend(index.params.get("search", "faiss")).open(
                folder=Path(index.name), params=index.params
            )
        return _open[key]


# -- the pool review page: a question's dialogue, its candidates, their ranks and decisions ------

FALSE_DECISIONS = tuple(d.value for d in FalseDecision)
GROUND_TRUTH_DECISIONS = tuple(d.value for d in GroundTruthDecision)
SOURCES = tuple(s.value for s in CandidateSource)
RETRIEVERS = ("lexical", "dense")
NOT_RECORDED = "reason not recorded (the pool was built before exclusions were recorded)"


@dataclass(frozen=True)
class PoolFilters:
    source: str = ""  # a CandidateSource: questions with a false candidate of it, and only those candidates
    decision: str = ""  # a FalseDecision: likewise
    ground_truth: str = ""  # a GroundTruthDecision: questions whose ground truth has it

    @property
    def active(self) -> bool:
        return bool(self.source or self.decision or self.ground_truth)

    def matches(self, row: CandidateDecision) -> bool:
        return (not self.source or row.source == self.source) and (not self.decision or row.decision == self.decision)


def pool_filters_check(*, source: str = "", decision: str = "", ground_truth: str = "") -> PoolFilters:
    """The review page's filters; an unknown value is a UserError naming the known ones."""
    for name, value, known in (
        ("source", source, SOURCES),
        ("decision", decision, FALSE_DECISIONS),
        ("ground_truth", ground_truth, GROUND_TRUTH_DECISIONS),
    ):
        if value and value not in known:
            raise UserError(f"{name} must be one of {', '.join(known)} (not {value[:40]!r})")
    return PoolFilters(source=source, decision=decision, ground_truth=ground_truth)


@dataclass
class PoolIndex:
    """The dataset's original questions that pass the filters, and counts over all of them."""

    question_ids: list[int]  # those passing the filters, in id order
    questions: int  # original questions
    by_source: list[dict]  # [{"source", "label", "all", "decisions": [(decision, n), ...]}], false candidates
    by_ground_truth: dict[str, int]
    computed_at: datetime


# The index decides every response of the dataset (0.75 s for 110,000 candidates), too slow to
# repeat on each page of keyboard paging. It is cached until a score or a candidate is added; what
# that misses (a crowd score confirmed, an annotator's scores excluded, a pool deleted) shows
# within this many seconds. The page says when its counts were computed.
POOL_INDEX_TTL_S = 60


def pool_index(*, dataset: Dataset, rules: FilterRules, filters: PoolFilters) -> PoolIndex:
    """The index of the review page: one query when cached (see POOL_INDEX_TTL_S), three otherwise."""
    key = ":".join(str(part) for part in ("pool-index", dataset.pk, rules.pk, *astuple(filters), *_pool_data_version()))
    index = cache.get(key)
    if index is None:
        index = _pool_index(dataset=dataset, rules=rules, filters=filters)
        cache.set(key, index, timeout=POOL_INDEX_TTL_S)
    return index


def _pool_data_version() -> tuple[int, int, int]:
    """The newest score and candidate (ids only grow) and the annotators whose scores are
    excluded: one query of three index lookups and a small count."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT MAX(id) FROM {Score._meta.db_table}), (SELECT MAX(id) FROM {Candidate._meta.db_table}),"
            f" (SELECT COUNT(*) FROM {Annotator._meta.db_table} WHERE scores_excluded)"
        )
        return tuple(value or 0 for value in cursor.fetchone())


def _pool_index(*, dataset: Dataset, rules: FilterRules, filters: PoolFilters) -> PoolIndex:
    """Two queries whatever the dataset's size: the rule decisions of every response, and the
    ids of the original questions."""
    rows = candidate_decisions(dataset=dataset, rules=rules)
    all_ids = list(
        Question.objects.filter(dataset=dataset, derived_from__isnull=True).order_by("id").values_list("id", flat=True)
    )
    ground_truth: dict[int, str] = {}
    wanted: set[int] = set()
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        if row.is_ground_truth:
            ground_truth[row.question_id] = row.decision
            continue
        by = counts.setdefault(row.source, dict.fromkeys(("all", *FALSE_DECISIONS), 0))
        by["all"] += 1
        by[row.decision] += 1
        if filters.matches(row):
            wanted.add(row.question_id)
    by_ground_truth = dict.fromkeys(GROUND_TRUTH_DECISIONS, 0)
    for decision in ground_truth.values():
        by_ground_truth[decision] += 1
    labels = dict(CandidateSource.choices)
    return PoolIndex(
        question_ids=[
            q
            for q in all_ids
            if (not (filters.source or filters.decision) or q in wanted)
            and (not filters.ground_truth or ground_truth.get(q, GroundTruthDecision.UNDECIDED) == filters.ground_truth)
        ],
        questions=len(all_ids),
        by_source=[
            {
                "source": s,
                "label": labels[s],
                "all": counts[s]["all"],
                "decisions": [(d, counts[s][d]) for d in FALSE_DECISIONS],
            }
            for s in SOURCES
            if s in counts
        ],
        by_ground_truth=by_ground_truth,
        computed_at=timezone.now(),
    )


def pool_question(*, question: Question, rules: FilterRules, filters: PoolFilters) -> dict:
    """One question as the review page shows it: the dialogue as the annotator sees it, the ground
    truth and the candidates (source, every retriever's rank and score, counted scores, rule
    decision), and per repository and retriever every rank down to the deepest one used, each a
    candidate or the reason it is not one. Five queries whatever the pool's size."""
    decisions = {d.id: d for d in candidate_decisions(dataset=question.dataset, rules=rules, question_id=question.pk)}
    candidates = list(
        Candidate.objects.filter(question=question)
        .order_by("-is_ground_truth", "id")
        .values(
            "id",
            "text",
            "is_ground_truth",
            "source",
            "retrieval_score",
            "rank",
            "retrieval",
            "retriever_version",
            "utterance_id",
            "utterance__repository_id",
        )
    )
    scores: dict[int, list[int]] = {}
    for candidate_id, value in (
        Score.objects.counted().filter(candidate__question=question).order_by("candidate_id", "value")
    ).values_list("candidate_id", "value"):
        scores.setdefault(candidate_id, []).append(value)
    labels = dict(CandidateSource.choices)
    shown, hidden = [], 0
    for c in candidates:
        decision = decisions.get(c["id"])
        c["source_label"] = labels.get(c["source"], c["source"])
        c["scores"] = scores.get(c["id"], [])
        c["decision"] = decision.decision if decision and c["scores"] else ""
        if c["is_ground_truth"] or decision is None or filters.matches(decision):
            shown.append(c)
        else:
            hidden += 1
    return {
        "question": question,
        "unit": {"turns": dialogue_turns_display(context_id=question.context_id)},  # as annotate/_context.html reads it
        "candidates": shown,
        "hidden": hidden,
        "pools": _rank_tables(question=question, candidates=candidates),
    }


def _rank_tables(*, question: Question, candidates: list[dict]) -> list[dict]:
    reasons = dict(ExclusionReason.choices)
    tables = []
    for pool in QuestionRetrieval.objects.filter(question=question).select_related("repository", "job").order_by("id"):
        retrievers = []
        for retriever in RETRIEVERS:
            ranks: dict[int, dict] = {}
            for c in candidates:
                if c["utterance__repository_id"] != pool.repository_id:
                    continue
                for found in c["retrieval"] or []:
                    if found.get("retriever") == retriever:
                        ranks[found["rank"]] = {
                            "rank": found["rank"],
                            "score": found.get("score"),
                            "text": c["text"],
                            "candidate": c["id"],
                            "why": "candidate"
                            if c["source"] == retriever
                            else f"candidate (put in the pool by {c['source']} retrieval)",
                        }
            for hit in pool.exclusions:
                if hit.get("retriever") == retriever:
                    ranks.setdefault(
                        hit["rank"],
                        {
                            "rank": hit["rank"],
                            "score": hit.get("score"),
                            "text": hit.get("text", ""),
                            "candidate": None,
                            "reason": hit["reason"],
                            "why": _reason_text(hit, reasons),
                        },
                    )
            if not ranks:
                continue
            # Down to the deepest rank the pool used; deeper hits are other retrievers' candidates found again.
            used = [r for r, entry in ranks.items() if entry["why"] == "candidate" or entry["candidate"] is None]
            for rank in range(1, max(used, default=0) + 1):
                ranks.setdefault(
                    rank, {"rank": rank, "score": None, "text": "", "candidate": None, "why": NOT_RECORDED}
                )
            retrievers.append(
                {
                    "retriever": retriever,
                    "ranks": [ranks[r] for r in sorted(ranks)],
                    "share": _share_text(pool, retriever, candidates, ranks.values(), reasons),
                }
            )
        tables.append({"pool": pool, "retrievers": retrievers})
    return tables


def _share_text(pool, retriever: str, candidates: list[dict], ranks, reasons: dict) -> str:
    """Why a retriever has fewer candidates in the pool than its share ("" when it has its share or
    the share is not known): its hits left out, by reason, or that it ran out of hits."""
    share = (pool.job.params or {}).get(retriever) if pool.job_id else None
    taken = sum(
        1 for c in candidates if c["utterance__repository_id"] == pool.repository_id and c["source"] == retriever
    )
    if not isinstance(share, int) or taken >= share:
        return ""
    left = Counter(entry["reason"] for entry in ranks if entry["candidate"] is None and entry.get("reason"))
    why = "; ".join(f"{n} {reasons.get(reason, reason)}" for reason, n in left.most_common())
    return f"{taken} of its {share} places: " + (f"hits left out: {why}." if why else "it returned no more hits.")


def _reason_text(hit: dict, reasons: dict) -> str:
    text = reasons.get(hit.get("reason"), hit.get("reason", ""))
    if "of" in hit:
        return f"{text} (cosine {readable.number(hit['similarity'])} to “{hit['of'][:80]}”)"
    if "similarity" in hit:
        return f"{text} (cosine {readable.number(hit['similarity'])})"
    if "tokens" in hit:
        return f"{text} ({hit['tokens']} tokens)"
    return text


def dataset_pool_counts(*, dataset) -> list[dict]:
    """Per repository the dataset's questions were pooled from: how many pools are done and how
    many failed (one aggregate query)."""
    from django.db.models import Count, Q

    from retrieval.models import PoolStatus, QuestionRetrieval

    return list(
        QuestionRetrieval.objects.filter(question__dataset=dataset)
        .values("repository__name")
        .annotate(
            done=Count("id", filter=Q(status=PoolStatus.DONE)), failed=Count("id", filter=Q(status=PoolStatus.FAILED))
        )
        .order_by("repository__name")
    )
