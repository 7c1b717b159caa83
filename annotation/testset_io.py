"""Reading a frozen test set and rendering it in each export format.

Renderers are generators of text lines so that exports stream (HTTP responses, files,
hashes) without holding the test set in memory. Output is a pure function of the frozen
rows, so exporting twice gives the same bytes.
"""

import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from annotation.models import Candidate, TestSet, TestSetCandidate, TestSetQuestion, Turn
from core.csv_safe import csv_writer
from core.errors import UserError

CHUNK = 1000
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
class TestSetItemCandidate:
    position: int
    is_ground_truth: bool
    scores: list  # [[annotator label, value], ...] as frozen at build time
    candidate: Candidate


@dataclass(frozen=True, slots=True)
class TestSetItem:
    position: int
    question_id: int
    derived_from_id: int | None
    turns: list[Turn]
    candidates: list[TestSetItemCandidate]  # in the test set's (shuffled) order

    @property
    def ground_truth(self) -> TestSetItemCandidate:
        return next(c for c in self.candidates if c.is_ground_truth)

    @property
    def false_candidates(self) -> list[TestSetItemCandidate]:
        return [c for c in self.candidates if not c.is_ground_truth]


def testset_items(testset: TestSet, *, chunk: int = CHUNK) -> Iterator[TestSetItem]:
    """The test set's questions in order, three queries per ``chunk`` questions."""
    last_position = -1
    while True:
        items = list(
            TestSetQuestion.objects.filter(testset=testset, position__gt=last_position)
            .select_related("question")
            .order_by("position")[:chunk]
        )
        if not items:
            return
        last_position = items[-1].position
        turns: dict[int, list[Turn]] = {}
        for turn in Turn.objects.filter(context_id__in={i.question.context_id for i in items}).order_by(
            "context_id", "position"
        ):
            turns.setdefault(turn.context_id, []).append(turn)
        candidates: dict[int, list[TestSetItemCandidate]] = {}
        for tsc in (
            TestSetCandidate.objects.filter(item__in=items).select_related("candidate").order_by("item_id", "position")
        ):
            candidates.setdefault(tsc.item_id, []).append(
                TestSetItemCandidate(tsc.position, tsc.is_ground_truth, tsc.scores, tsc.candidate)
            )
        for item in items:
            yield TestSetItem(
                position=item.position,
                question_id=item.question_id,
                derived_from_id=item.question.derived_from_id,
                turns=turns.get(item.question.context_id, []),
                candidates=candidates.get(item.pk, []),
            )


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


def recorded_version(testset: TestSet, kind: str) -> int:
    """The format version whose sha256 the test set's manifest records for ``kind``."""
    return testset.manifest["files"][kind].get("format_version", 1)


def manifest_bytes(testset: TestSet) -> bytes:
    return (json.dumps(testset.manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
