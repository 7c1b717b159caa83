"""The records of a release's Hugging Face folder (data/test.jsonl and data/test.parquet): one per
question, written from a frozen test set and read back, line by line, by the import.

Field order and types are fixed here (RECORD_FIELDS), so that the JSONL, the Parquet schema, the
card's features, croissant.json and the reader describe the same records: question_id, context
(turns), choices (in the release's order), label (index of the ground truth in choices), sources
(one per choice), derived_from (a question_id or null) and scores (one list of 0-5 scores per
choice, possibly empty).
"""

import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from annotation.models import CandidateSource, Score
from annotation.services.questions import check_text
from core.errors import ImportFileError
from core.json_lines import JSONSyntaxError, parse_json_line
from core.lines import LineReader, RawLine
from core.text import text_hash
from testsets.items import TestSetItem
from testsets.models import TestSet, TestSetQuestion

from ..base import recorded_version
from ..jsonl import JSONL_FILE, JSONL_SOURCES_SPLIT
from ..sources import LEGACY_GENERATED, published_source

# The source a release gives its original ground truths; read back as "imported", like every
# imported candidate.
GROUND_TRUTH_SOURCE = "ground_truth"
# name -> (type as the Hub's card writes it, what it is). Parquet and croissant.json follow it.
RECORD_FIELDS = {
    "question_id": ("string", "the question's key in the release: '<release>-<position>', the same in every database"),
    "context": ("list: string", "the dialogue turns before the response, oldest first, without speaker tags"),
    "choices": ("list: string", "the candidate responses in the release's (seeded, shuffled) order"),
    "label": ("int64", "index in choices of the ground truth"),
    "sources": (
        "list: string",
        "per choice, where it came from: ground_truth (the dialogue's own next turn), lexical or dense "
        "(retrieved), mlm_negative (made from the ground truth with a masked LM), system_response (a "
        "system's generated response), imported, contrastive; a release built before JSONL format "
        "version 4 says generated for mlm_negative and system_response",
    ),
    "derived_from": (
        "string",
        "for a derived question (an acceptable retrieved response made the ground truth, Sato et al. §3.2): "
        "the question_id of the question it was derived from; null otherwise",
    ),
    "scores": ("list: list: int64", "per choice, the human scores (0-5) it had when the release was built"),
}


def question_keys(testset: TestSet) -> dict[int, str]:
    """Question id -> its key in the release. Zero-padded so that keys sort in the release's order."""
    positions = dict(TestSetQuestion.objects.filter(testset=testset).values_list("question_id", "position"))
    width = max(4, len(str(max(positions.values(), default=0))))
    return {qid: f"{testset.name}-{position:0{width}d}" for qid, position in positions.items()}


def sources_split(testset: TestSet) -> bool:
    """Whether the release's records tell a masked-LM negative from a system's response: they are
    made of the same rows as its JSONL, and follow the JSONL's recorded format version."""
    return recorded_version(testset, JSONL_FILE.kind) >= JSONL_SOURCES_SPLIT


def choice_source(candidate, *, split: bool) -> str:
    # The dialogue's own next turn is a Candidate too (source "imported" when the dialogue was read).
    return GROUND_TRUTH_SOURCE if candidate.is_ground_truth else published_source(candidate.source, split=split)


def hf_record(item: TestSetItem, keys: dict[int, str], *, split: bool) -> dict:
    return {
        "question_id": keys[item.question_id],
        "context": [t.text for t in item.turns],
        "choices": [c.candidate.text for c in item.candidates],
        "label": next(i for i, c in enumerate(item.candidates) if c.is_ground_truth),
        "sources": [choice_source(c.candidate, split=split) for c in item.candidates],
        # a derived question's original is always in the same release (plan_questions keeps it first)
        "derived_from": keys.get(item.derived_from_id) if item.derived_from_id else None,
        "scores": [[value for _, value in c.scores] for c in item.candidates],
    }


def render_hf_jsonl(records: Iterable[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def render_hf_parquet(records: list[dict]) -> bytes:
    """The same records as Parquet. Compression and encoding are fixed and Parquet writes no
    timestamp, so the bytes depend on the records and the pyarrow version only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            ("question_id", pa.string()),
            ("context", pa.list_(pa.string())),
            ("choices", pa.list_(pa.string())),
            ("label", pa.int64()),
            ("sources", pa.list_(pa.string())),
            ("derived_from", pa.string()),
            ("scores", pa.list_(pa.list_(pa.int64()))),
        ]
    )
    table = pa.Table.from_pylist(records, schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd", compression_level=3, use_dictionary=False, write_statistics=False)
    return buffer.getvalue()


# Reading the records back (import_testset --format hf)

FIELDS = tuple(RECORD_FIELDS)
# What a "sources" entry may say, and the CandidateSource it is stored as. "generated", in releases
# built before the split, is read as a masked-LM negative: a release is built from a dataset scored
# for selection, which a system's responses (a rating dataset's candidates) never are.
SOURCES = {
    GROUND_TRUTH_SOURCE: CandidateSource.IMPORTED.value,
    **{source: source for source in CandidateSource.values},
    LEGACY_GENERATED: CandidateSource.MLM_NEGATIVE.value,
}
MAX_QUESTION_ID_CHARS = 200
# Bounds that keep one line from creating thousands of placeholder annotators or candidates.
MAX_CHOICES = 1000
MAX_SCORES_PER_CHOICE = 100


@dataclass(frozen=True, slots=True)
class HFRecord:
    line: int
    question_id: str
    context: list[str]
    choices: list[str]
    label: int
    sources: list[str]  # CandidateSource values (mapped by SOURCES: "ground_truth" is "imported")
    derived_from: str | None
    scores: list[list[int]]

    @property
    def ground_truth(self) -> str:
        return self.choices[self.label]


def hf_records(
    path: Path, *, report: dict | None = None, progress: Callable[[LineReader], None] | None = None
) -> Iterator[HFRecord]:
    """The file's records, each checked on its own; blank lines and a cut-off last line are skipped
    (and counted in ``report``, when given). ``progress(reader)`` is called with the LineReader
    after each line (see LineReader.report)."""
    reader = LineReader(path, max_bytes=settings.WELLCHOSEN_MAX_UTTERANCE_CHARS * 4 * 64)
    n_choices = None
    for line in reader:
        if progress:
            progress(reader)
        if line.too_long:
            raise ImportFileError(path, line.number, None, "line is too long to be a question")
        if not line.data.strip():
            if report is not None:
                report["skipped_blank"] += 1
            continue
        record = _parse(line, path=path)
        if record is None:
            if report is not None:
                report["skipped_truncated_last_line"] += 1
            continue
        if n_choices is None:
            n_choices = len(record.choices)
        elif len(record.choices) != n_choices:
            raise ImportFileError(
                path,
                line.number,
                "choices",
                f"has {len(record.choices)} choices; the first question has {n_choices} "
                "(every question of a test set has as many)",
            )
        yield record


def context_digest(context: list[str]) -> str:
    return text_hash("\n".join(context))


def _parse(line: RawLine, *, path: Path) -> HFRecord | None:
    n = line.number
    try:
        obj = parse_json_line(line.data, path=path, line=n)
    except JSONSyntaxError:
        if not line.terminated:
            return None  # a last line cut off mid-object (an interrupted download)
        raise
    if not isinstance(obj, dict):
        raise ImportFileError(path, n, None, f"expected a JSON object with the fields {', '.join(FIELDS)}")
    for key in obj:
        if key not in FIELDS:
            raise ImportFileError(path, n, key, f"is not a field of this format (expected {', '.join(FIELDS)})")
    for key in FIELDS:
        if key not in obj:
            raise ImportFileError(path, n, key, "is missing")
    question_id = _identifier(obj["question_id"], path=path, line=n, field="question_id")
    context = _texts(obj["context"], path=path, line=n, field="context", minimum=1)
    choices = _texts(obj["choices"], path=path, line=n, field="choices", minimum=2)
    if len(choices) > MAX_CHOICES:
        raise ImportFileError(path, n, "choices", f"has {len(choices)} choices; the limit is {MAX_CHOICES}")
    seen: dict[str, int] = {}
    for i, text in enumerate(choices):
        first = seen.setdefault(text_hash(text), i)
        if first != i:
            raise ImportFileError(path, n, f"choices[{i}]", f"is the same text as choices[{first}] after normalisation")
    label = obj["label"]
    if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label < len(choices):
        raise ImportFileError(
            path, n, "label", f"must be an index into choices, 0 to {len(choices) - 1}, not {label!r:.40}"
        )
    derived_from = obj["derived_from"]
    if derived_from is not None:
        derived_from = _identifier(derived_from, path=path, line=n, field="derived_from")
        if derived_from == question_id:
            raise ImportFileError(path, n, "derived_from", "names the question itself")
    return HFRecord(
        line=n,
        question_id=question_id,
        context=context,
        choices=choices,
        label=label,
        sources=_sources(obj["sources"], path=path, line=n, label=label, n_choices=len(choices)),
        derived_from=derived_from,
        scores=_scores(obj["scores"], path=path, line=n, n_choices=len(choices)),
    )


def _identifier(value, *, path: Path, line: int, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ImportFileError(path, line, field, "must be a non-empty string")
    if len(value) > MAX_QUESTION_ID_CHARS:
        raise ImportFileError(path, line, field, f"is longer than {MAX_QUESTION_ID_CHARS} characters")
    return value


def _texts(value, *, path: Path, line: int, field: str, minimum: int) -> list[str]:
    if not isinstance(value, list) or len(value) < minimum:
        raise ImportFileError(path, line, field, f"must be a list of at least {minimum} string(s)")
    texts = []
    for i, text in enumerate(value):
        if not isinstance(text, str):
            raise ImportFileError(path, line, f"{field}[{i}]", f"must be a string, not {type(text).__name__}")
        texts.append(check_text(text, path=path, line=line, field_name=f"{field}[{i}]"))
    return texts


def _sources(value, *, path: Path, line: int, label: int, n_choices: int) -> list[str]:
    if not isinstance(value, list) or len(value) != n_choices:
        raise ImportFileError(path, line, "sources", f"must be a list of {n_choices} strings, one per choice")
    sources = []
    for i, source in enumerate(value):
        if not isinstance(source, str) or source not in SOURCES:
            raise ImportFileError(
                path, line, f"sources[{i}]", f"must be one of {', '.join(SOURCES)}, not {source!r:.40}"
            )
        if source == GROUND_TRUTH_SOURCE and i != label:
            raise ImportFileError(path, line, f"sources[{i}]", f"is {GROUND_TRUTH_SOURCE} but label is {label}")
        sources.append(SOURCES[source])
    return sources


def _scores(value, *, path: Path, line: int, n_choices: int) -> list[list[int]]:
    if not isinstance(value, list) or len(value) != n_choices:
        raise ImportFileError(path, line, "scores", f"must be a list of {n_choices} score lists, one per choice")
    for i, scores in enumerate(value):
        if not isinstance(scores, list):
            raise ImportFileError(path, line, f"scores[{i}]", "must be a list of scores (empty when unscored)")
        if len(scores) > MAX_SCORES_PER_CHOICE:
            raise ImportFileError(
                path, line, f"scores[{i}]", f"has {len(scores)} scores; the limit is {MAX_SCORES_PER_CHOICE}"
            )
        for j, score in enumerate(scores):
            if isinstance(score, bool) or not isinstance(score, int) or not Score.MIN_VALUE <= score <= Score.MAX_VALUE:
                raise ImportFileError(
                    path,
                    line,
                    f"scores[{i}][{j}]",
                    f"score {score!r:.40} is not an integer from {Score.MIN_VALUE} to {Score.MAX_VALUE}",
                )
    return value
