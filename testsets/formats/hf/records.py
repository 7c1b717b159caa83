"""The records of a release's Hugging Face folder: one per question, as JSON lines and Parquet.

Field order and types are fixed here (RECORD_FIELDS), so that the JSONL, the Parquet schema, the
card's features and croissant.json describe the same records.
"""

import io
import json
from collections.abc import Iterable, Iterator

from annotation.models import TestSet, TestSetQuestion
from annotation.testset_io import TestSetItem, testset_items

# name -> (type as the Hub's card writes it, what it is). Parquet and croissant.json follow it.
RECORD_FIELDS = {
    "question_id": ("string", "the question's key in the release: '<release>-<position>', the same in every database"),
    "context": ("list: string", "the dialogue turns before the response, oldest first, without speaker tags"),
    "choices": ("list: string", "the candidate responses in the release's (seeded, shuffled) order"),
    "label": ("int64", "index in choices of the ground truth"),
    "sources": (
        "list: string",
        "per choice, where it came from: ground_truth (the dialogue's own next turn), lexical or dense "
        "(retrieved), generated, perturbed, imported, manual, contrastive",
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


def choice_source(candidate) -> str:
    # The dialogue's own next turn is a Candidate too (source "imported" when the dialogue was read).
    return "ground_truth" if candidate.is_ground_truth else candidate.source


def hf_record(item: TestSetItem, keys: dict[int, str]) -> dict:
    return {
        "question_id": keys[item.question_id],
        "context": [t.text for t in item.turns],
        "choices": [c.candidate.text for c in item.candidates],
        "label": next(i for i, c in enumerate(item.candidates) if c.is_ground_truth),
        "sources": [choice_source(c.candidate) for c in item.candidates],
        # a derived question's original is always in the same release (plan_questions keeps it first)
        "derived_from": keys.get(item.derived_from_id) if item.derived_from_id else None,
        "scores": [[value for _, value in c.scores] for c in item.candidates],
    }


def hf_records(testset: TestSet) -> Iterator[dict]:
    """The release's questions in its order (the order every other export uses)."""
    keys = question_keys(testset)
    for item in testset_items(testset):
        yield hf_record(item, keys)


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
