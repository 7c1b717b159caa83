"""The JSON-lines export: one object per question, with every id, candidate provenance and score.

Versions: 1 as first released; 2: each candidate also carries "retrieval" (every retriever that
found it) and "provenance" (how a generated candidate was made: model, version, settings, the
edit); 3: each question says whether it is derived ("derived": true/false) beside the id of the
question it was derived from; 4: a candidate's "source" says "mlm_negative" or "system_response"
where versions 1 to 3 say "generated" for both (testsets.formats.sources).
"""

import json
from collections.abc import Iterable, Iterator

from testsets.items import TestSetItem, TestSetItemCandidate

from .base import ExportFile, TestsetFormat
from .sources import published_source

# The first version whose sources tell a masked-LM negative from a system's response.
JSONL_SOURCES_SPLIT = 4


def render_jsonl(items: Iterable[TestSetItem], *, version: int = 4) -> Iterator[str]:
    """Everything: ids, provenance (retriever, score, rank, version; from version 2, every
    retriever that found a candidate and how a generated one was made), every score, from
    version 3, whether the question is derived and, from version 4, the split sources."""
    split = version >= JSONL_SOURCES_SPLIT

    def candidate(c: TestSetItemCandidate) -> dict:
        fields = {
            "candidate_id": c.candidate.pk,
            "text": c.candidate.text,
            "is_ground_truth": c.is_ground_truth,
            "source": published_source(c.candidate.source, split=split),
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


JSONL_FILE = ExportFile(
    kind="jsonl",
    suffix=".jsonl",
    content_type="application/jsonl",
    version=4,
    render_apart=True,
    render=lambda items, testset, version: render_jsonl(items, version=version),
)


class JSONLFormat(TestsetFormat):
    name = "jsonl"
    files = (JSONL_FILE,)
