"""Reading a frozen test set and rendering it in each export format.

Renderers are generators of text lines so that exports stream (HTTP responses, files,
hashes) without holding the test set in memory. Output is a pure function of the frozen
rows, so exporting twice gives the same bytes.
"""

import io
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db import connection

from annotation.models import Candidate, Question, TestSet, TestSetCandidate, TestSetQuestion, Turn
from core.csv_safe import csv_writer
from core.errors import UserError

CHUNK = 5000
# The version of each export's format. A manifest records each file's sha256 with the version it
# was built in ("format_version"; a manifest that names none was built in version 1 of every
# format). csv 1: text cells as stored, "\n" line ends; csv 2: text cells escaped for spreadsheets
# (core.csv_safe) and RFC 4180 "\r\n" line ends, so that a carriage return inside a cell is quoted.
# jsonl 2: each candidate also carries "retrieval" (every retriever that found it) and "provenance"
# (how a generated candidate was made: model, version, settings, the edit).
# jsonl 3 and csv 3: each question says whether it is derived ("derived": true/false; the CSV's
# "derived" column, 1/0) beside the id of the question it was derived from.
FORMAT_VERSIONS = {"tsv": 1, "human_scores": 1, "jsonl": 3, "csv": 3}


@dataclass(frozen=True, slots=True)
class ItemTurn:
    """A context turn as the exports read it."""

    speaker: str
    text: str


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


def testset_items(testset: TestSet, *, chunk: int = CHUNK) -> Iterator[TestSetItem]:
    """The test set's questions in order, three queries per ``chunk`` questions.

    Plain SQL and tuples: at 100,000 questions the ORM's model instances (a TestSetCandidate and a
    Candidate per row) cost several times the queries, and every export reads the whole set."""
    tsq, tsc = TestSetQuestion._meta.db_table, TestSetCandidate._meta.db_table
    question, candidate, turn = Question._meta.db_table, Candidate._meta.db_table, Turn._meta.db_table
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
                f"SELECT t.context_id, t.speaker, t.text FROM {turn} t WHERE t.context_id IN "
                f"(SELECT q.context_id FROM {tsq} tsq JOIN {question} q ON q.id = tsq.question_id WHERE {page}) "
                "ORDER BY t.context_id, t.position",
                bounds,
            )
            turns: dict[int, list[ItemTurn]] = {}
            for context_id, speaker, text in cursor.fetchall():
                turns.setdefault(context_id, []).append(ItemTurn(speaker, text))
            cursor.execute(
                "SELECT tsc.item_id, tsc.position, tsc.is_ground_truth, tsc.scores, c.id, c.text, c.is_ground_truth, "
                "c.source, c.utterance_id, c.retrieval_score, c.rank, c.retriever_version, c.retrieval, c.provenance "
                f"FROM {tsc} tsc JOIN {tsq} tsq ON tsq.id = tsc.item_id JOIN {candidate} c ON c.id = tsc.candidate_id "
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
                        ItemCandidate(c[0], c[1], bool(c[2]), c[3], c[4], c[5], c[6], c[7], _json(c[8]), _json(c[9])),
                    )
                )
            for item_id, position, question_id, derived_from_id, context_id in items:
                yield TestSetItem(
                    position=position,
                    question_id=question_id,
                    derived_from_id=derived_from_id,
                    turns=turns.get(context_id, []),
                    candidates=candidates.get(item_id, []),
                )


def _json(value):
    """A JSON column's value (the drivers give its text; most candidates have no retrievers and
    no provenance)."""
    if value == "[]":
        return []
    if value == "{}":
        return {}
    return json.loads(value) if isinstance(value, str) else value


def _one_line(text: str) -> str:
    # Stored texts are whitespace-normalised already; this guards the line-based formats.
    return " ".join(text.split())


def render_tsv(items: Iterable[TestSetItem]) -> Iterator[str]:
    """Sato et al.'s released format: context turns, ground truth, false candidates."""
    for item in items:
        fields = [t.text for t in item.turns] + [item.ground_truth.candidate.text]
        fields += [c.candidate.text for c in item.false_candidates]
        yield "\t".join(_one_line(f) for f in fields) + "\n"


def render_human_scores(items: Iterable[TestSetItem]) -> Iterator[str]:
    """human_scores.jsonl aligned with the TSV: ground truth's scores, then each false candidate's."""
    for item in items:
        ordered = [item.ground_truth, *item.false_candidates]
        yield json.dumps([[value for _, value in c.scores] for c in ordered], separators=(", ", ": ")) + "\n"


def render_jsonl(items: Iterable[TestSetItem], *, version: int = 3) -> Iterator[str]:
    """Everything: ids, provenance (retriever, score, rank, version; from version 2, every
    retriever that found a candidate and how a generated one was made), every score and, from
    version 3, whether the question is derived."""

    def candidate(c: TestSetItemCandidate) -> dict:
        fields = {
            "candidate_id": c.candidate.pk,
            "text": c.candidate.text,
            "is_ground_truth": c.is_ground_truth,
            "source": c.candidate.source,
            "utterance_id": c.candidate.utterance_id,
            "retrieval_score": c.candidate.retrieval_score,
            "rank": c.candidate.rank,
            "retriever_version": c.candidate.retriever_version,
            "scores": [{"annotator": label, "value": value} for label, value in c.scores],
        }
        if version >= 2:
            fields["retrieval"] = c.candidate.retrieval
            fields["provenance"] = c.candidate.provenance
        return fields

    for item in items:
        record = {
            "position": item.position,
            "question_id": item.question_id,
            "derived_from_question_id": item.derived_from_id,
            "context": [{"speaker": t.speaker, "text": t.text} for t in item.turns],
            "ground_truth_index": next(i for i, c in enumerate(item.candidates) if c.is_ground_truth),
            "candidates": [candidate(c) for c in item.candidates],
        }
        if version >= 3:
            record["derived"] = item.derived_from_id is not None
        yield json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"


def render_csv(items: Iterable[TestSetItem], *, context_turns: int, version: int = 3) -> Iterator[str]:
    """One row per candidate, for spreadsheets. Text cells are escaped (from version 2), numbers are
    written as numbers, a "derived" column (1/0) follows the question's origin (version 3); older
    versions re-create the files of test sets built before."""
    derived_column = version >= 3
    buffer = io.StringIO()
    if version == 1:
        writer = csv_writer(buffer, escape_formulas=False, lineterminator="\n")
    else:
        writer = csv_writer(buffer, lineterminator="\r\n")

    def flush() -> str:
        value = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return value

    writer.writerow(
        ["question_position", "question_id", "derived_from_question_id"]
        + (["derived"] if derived_column else [])
        + [f"context_{i + 1}" for i in range(context_turns)]
        + [
            "candidate_position",
            "candidate_id",
            "is_ground_truth",
            "text",
            "source",
            "retrieval_score",
            "rank",
            "retriever_version",
            "n_scores",
            "mean_score",
            "scores",
        ]
    )
    yield flush()
    for item in items:
        context = [t.text for t in item.turns][:context_turns]
        context += [""] * (context_turns - len(context))
        for c in item.candidates:
            values = [v for _, v in c.scores]
            writer.writerow(
                [item.position, item.question_id, item.derived_from_id or ""]
                + ([int(item.derived_from_id is not None)] if derived_column else [])
                + context
                + [
                    c.position,
                    c.candidate.pk,
                    int(c.is_ground_truth),
                    c.candidate.text,
                    c.candidate.source,
                    "" if c.candidate.retrieval_score is None else c.candidate.retrieval_score,
                    c.candidate.rank or "",
                    c.candidate.retriever_version,
                    len(values),
                    f"{sum(values) / len(values):.4f}" if values else "",
                    ";".join(f"{label}={value}" for label, value in c.scores),
                ]
            )
        yield flush()


# export kind -> (file suffix, renderer taking (items, testset, version), content type)
EXPORTS = {
    "tsv": (".tsv", lambda items, ts, v: render_tsv(items), "text/tab-separated-values"),
    "human_scores": (".human_scores.jsonl", lambda items, ts, v: render_human_scores(items), "application/jsonl"),
    "jsonl": (".jsonl", lambda items, ts, v: render_jsonl(items, version=v), "application/jsonl"),
    "csv": (
        ".csv",
        lambda items, ts, v: render_csv(items, context_turns=ts.dataset.context_turns, version=v),
        "text/csv",
    ),
}
# What `export_testset --format` writes for each choice.
FORMAT_FILES = {"tsv": ("tsv", "human_scores"), "jsonl": ("jsonl",), "csv": ("csv",)}


def export_filename(testset: TestSet, kind: str) -> str:
    return f"{testset.name}{EXPORTS[kind][0]}"


def render_export(testset: TestSet, kind: str, *, version: int | None = None) -> Iterator[str]:
    """The export ``kind`` in its format ``version`` (the current one by default)."""
    version = FORMAT_VERSIONS[kind] if version is None else version
    if not 1 <= version <= FORMAT_VERSIONS[kind]:
        raise UserError(f"{kind} has format versions 1 to {FORMAT_VERSIONS[kind]}, not {version}")
    return EXPORTS[kind][1](testset_items(testset), testset, version)


def render_exports(testset: TestSet, wanted: list[tuple[str, int]]) -> Iterator[tuple[str, ...]]:
    """Several exports (``(kind, version)`` each) in one read of the test set: tuples of the next
    chunk of each, in the order of ``wanted`` ("" for one that has ended)."""
    for kind, version in wanted:
        if not 1 <= version <= FORMAT_VERSIONS[kind]:
            raise UserError(f"{kind} has format versions 1 to {FORMAT_VERSIONS[kind]}, not {version}")
    # The renderers take one chunk per item (the CSV a header first), so the copies tee keeps of
    # the items not yet rendered by all stay a few items long.
    streams = itertools.tee(testset_items(testset), len(wanted))
    renderers = [
        EXPORTS[kind][1](items, testset, version) for items, (kind, version) in zip(streams, wanted, strict=True)
    ]
    return itertools.zip_longest(*renderers, fillvalue="")


def recorded_version(testset: TestSet, kind: str) -> int:
    """The format version whose sha256 the test set's manifest records for ``kind``."""
    return testset.manifest["files"][kind].get("format_version", 1)


def manifest_bytes(testset: TestSet) -> bytes:
    return (json.dumps(testset.manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
