"""Pair sets as JSON lines: export for sharing and archiving, import of pairs made elsewhere
(by hand, as in Okano et al., or by another tool).

One pair per line::

    {"context": ["turn 1", "turn 2", "turn 3"], "correct": "...", "incorrect": "...",
     "type": "content", "subtype": "noun", "criterion": "el",
     "span": [4, 7], "incorrect_span": [4, 9], "review": "accepted", "provenance": {...}}

``subtype``, ``criterion``, the spans, ``review`` and ``provenance`` are optional. Without spans
the smallest whole-word spans outside which the responses agree are computed; given spans must
leave the text outside them the same. An imported pair is ``accepted`` unless its line says
``pending`` or ``rejected``: a hand-made pair has had its review. The whole file is checked and
stored in one transaction: one bad line and nothing is imported. A last line cut off (no newline,
not JSON) is skipped and counted, as in the other JSON-lines imports.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.db import transaction

from core.errors import ImportFileError, UserError
from core.json_lines import JSONSyntaxError, parse_json_line
from core.lines import LineReader
from pairs.edits import Criterion
from pairs.models import Pair, PairSet, Review
from pairs.selectors import review_counts
from pairs.services.building import pair_key
from pairs.text import edit_spans

FIELDS = frozenset(
    {
        "context",
        "correct",
        "incorrect",
        "type",
        "subtype",
        "criterion",
        "span",
        "incorrect_span",
        "review",
        "provenance",
    }
)
_SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
_BATCH = 2000


def pairs_import(*, set_name: str, path: Path | str, description: str = "", created_by=None) -> dict:
    """Import the file into a new set. The same file into the set it made returns that import's
    report (a job retried after its import committed); anything else into an existing set is refused."""
    path = Path(path)
    digest = _file_digest(path)
    existing = PairSet.objects.filter(name=set_name).first()
    if existing is not None:
        if existing.report.get("file_sha256") == digest:
            return existing.report
        raise UserError(f"pair set {set_name!r} exists: import into a new set")
    if not _SLUG.match(set_name) or len(set_name) > 100:
        raise UserError(f"pair set name {set_name!r}: letters, digits, - and _ only, at most 100")
    max_bytes = settings.WELLCHOSEN_MAX_UTTERANCE_CHARS * 4 * 16
    with transaction.atomic():
        pair_set = PairSet.objects.create(name=set_name, description=description, created_by=created_by)
        seen: dict[str, int] = {}
        batch: list[Pair] = []
        count = 0
        skipped = {"skipped_truncated_last_line": 0}
        for number, pair in _read(path, max_bytes=max_bytes, pair_set=pair_set, skipped=skipped):
            if pair.key in seen:
                raise ImportFileError(path, number, None, f"the same pair as line {seen[pair.key]}")
            seen[pair.key] = number
            batch.append(pair)
            if len(batch) >= _BATCH:
                Pair.objects.bulk_create(batch)
                count += len(batch)
                batch = []
        Pair.objects.bulk_create(batch)
        count += len(batch)
        if not count:
            raise ImportFileError(path, None, None, "has no pair")
        report = {"set": set_name, "file": path.name, "file_sha256": digest, "pairs": count, **skipped}
        report.update(review_counts(pair_set=pair_set))
        PairSet.objects.filter(pk=pair_set.pk).update(report=report)
    return report


def _file_digest(path: Path) -> str:
    if not path.is_file():
        raise UserError(f"no file {path}")
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


def pair_lines(*, pair_set: PairSet, accepted_only: bool = False) -> Iterator[str]:
    """The set's pairs, one JSON object per line, in id order, streamed (the command and the
    admin's download)."""
    pairs = pair_set.pairs.order_by("id")
    if accepted_only:
        pairs = pairs.filter(review=Review.ACCEPTED)
    for pair in pairs.iterator(chunk_size=_BATCH):
        yield json.dumps(pair_record(pair), ensure_ascii=False) + "\n"


def pairs_export(*, pair_set: PairSet, out, accepted_only: bool = False) -> int:
    """Write the set's pairs to the text stream ``out``; returns how many."""
    count = 0
    for line in pair_lines(pair_set=pair_set, accepted_only=accepted_only):
        out.write(line)
        count += 1
    return count


def pair_record(pair: Pair) -> dict:
    return {
        "context": pair.context,
        "correct": pair.correct,
        "incorrect": pair.incorrect,
        "type": pair.type,
        "subtype": pair.subtype,
        "criterion": pair.criterion,
        "span": [pair.correct_start, pair.correct_end],
        "incorrect_span": [pair.incorrect_start, pair.incorrect_end],
        "review": pair.review,
        "provenance": pair.provenance,
    }


def _read(path: Path, *, max_bytes: int, pair_set: PairSet, skipped: dict) -> Iterator[tuple[int, Pair]]:
    for line in LineReader(path, max_bytes=max_bytes):
        if line.too_long:
            raise ImportFileError(path, line.number, None, f"line is longer than {max_bytes} bytes")
        if not line.data.strip():
            continue
        try:
            data = parse_json_line(line.data, path=path, line=line.number)
        except JSONSyntaxError:
            if line.terminated:
                raise
            # a last line without its newline that is not JSON: a file cut off while written,
            # skipped and counted as the other JSON-lines imports do
            skipped["skipped_truncated_last_line"] += 1
            continue
        yield line.number, _pair(data, pair_set=pair_set, path=path, line=line.number)


def _pair(data, *, pair_set: PairSet, path: Path, line: int) -> Pair:
    def fail(field: str | None, message: str):
        raise ImportFileError(path, line, field, message)

    if not isinstance(data, dict):
        fail(None, f"must be a JSON object, not {type(data).__name__}")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        fail(unknown[0], f"unknown field (known: {', '.join(sorted(FIELDS))})")
    for name in ("context", "correct", "incorrect", "type"):
        if name not in data:
            fail(name, "is missing")
    context = data["context"]
    if not isinstance(context, list) or not context or not all(isinstance(t, str) and t.strip() for t in context):
        fail("context", "must be a non-empty list of non-empty strings (the turns, oldest first)")
    texts = {}
    for name in ("correct", "incorrect"):
        value = data[name]
        if not isinstance(value, str) or not value.strip():
            fail(name, "must be a non-empty string")
        if len(value) > settings.WELLCHOSEN_MAX_UTTERANCE_CHARS:
            fail(name, f"is longer than {settings.WELLCHOSEN_MAX_UTTERANCE_CHARS} characters")
        texts[name] = value
    correct, incorrect = texts["correct"], texts["incorrect"]
    if correct == incorrect:
        fail("incorrect", "is the same as the correct response")
    labels = {}
    for name, required in (("type", True), ("subtype", False)):
        value = data.get(name, "")
        if not isinstance(value, str) or (value and not _SLUG.match(value)) or (required and not value):
            fail(name, "must be a name of letters, digits, - and _")
        if len(value) > Pair._meta.get_field(name).max_length:
            fail(name, f"is longer than {Pair._meta.get_field(name).max_length} characters")
        labels[name] = value
    criterion = data.get("criterion", "")
    if criterion not in ("", *Criterion.ALL):
        fail("criterion", f"must be one of {', '.join(Criterion.ALL)} or empty")
    review = data.get("review", Review.ACCEPTED)
    if review not in Review.values:
        fail("review", f"must be one of {', '.join(Review.values)}")
    provenance = data.get("provenance", {})
    if not isinstance(provenance, dict):
        fail("provenance", "must be a JSON object")
    span, incorrect_span = _spans(data, correct, incorrect, fail)
    return Pair(
        pair_set=pair_set,
        context=context,
        correct=correct,
        incorrect=incorrect,
        type=labels["type"],
        subtype=labels["subtype"],
        criterion=criterion,
        correct_start=span[0],
        correct_end=span[1],
        incorrect_start=incorrect_span[0],
        incorrect_end=incorrect_span[1],
        provenance={"method": "imported", "file": path.name, "line": line, **provenance},
        key=pair_key(context, correct, incorrect),
        review=review,
        source_line=line,
    )


def _spans(data: dict, correct: str, incorrect: str, fail) -> tuple[tuple[int, int], tuple[int, int]]:
    if "span" not in data and "incorrect_span" not in data:
        return edit_spans(correct, incorrect)
    spans = []
    for name, text in (("span", correct), ("incorrect_span", incorrect)):
        value = data.get(name)
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            or not 0 <= value[0] <= value[1] <= len(text)
        ):
            fail(name, f"must be [start, end] with 0 <= start <= end <= {len(text)} (characters of the response)")
        spans.append((value[0], value[1]))
    (s, e), (s2, e2) = spans
    if correct[:s] != incorrect[:s2] or correct[e:] != incorrect[e2:]:
        fail("span", "the responses differ outside the spans")
    return spans[0], spans[1]
