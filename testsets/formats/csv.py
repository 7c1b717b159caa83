"""The CSV export: one row per candidate, for spreadsheets.

Versions: 1: text cells as stored, "\n" line ends; 2: text cells escaped for spreadsheets
(core.csv_safe) and RFC 4180 "\r\n" line ends, so that a carriage return inside a cell is quoted;
3: a "derived" column (1/0) beside the id of the question a question was derived from; 4: the
"source" column says "mlm_negative" or "system_response" where versions 1 to 3 say "generated" for
both (testsets.formats.sources).
"""

import io
from collections.abc import Iterable, Iterator

from core.csv_safe import csv_writer
from testsets.items import TestSetItem

from .base import ExportFile, TestsetFormat
from .sources import published_source

# The first version whose sources tell a masked-LM negative from a system's response.
CSV_SOURCES_SPLIT = 4


def render_csv(items: Iterable[TestSetItem], *, context_turns: int, version: int = 4) -> Iterator[str]:
    """One row per candidate, for spreadsheets. Text cells are escaped (from version 2), numbers are
    written as numbers, a "derived" column (1/0) follows the question's origin (version 3), the
    sources are split (version 4); older versions re-create the files of test sets built before."""
    derived_column = version >= 3
    split = version >= CSV_SOURCES_SPLIT
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
                    published_source(c.candidate.source, split=split),
                    "" if c.candidate.retrieval_score is None else c.candidate.retrieval_score,
                    c.candidate.rank or "",
                    c.candidate.retriever_version,
                    len(values),
                    f"{sum(values) / len(values):.4f}" if values else "",
                    ";".join(f"{label}={value}" for label, value in c.scores),
                ]
            )
        yield flush()


class CSVFormat(TestsetFormat):
    name = "csv"
    files = (
        ExportFile(
            kind="csv",
            suffix=".csv",
            content_type="text/csv",
            version=4,
            render_apart=True,
            render=lambda items, testset, version: render_csv(
                items, context_turns=testset.dataset.context_turns, version=version
            ),
        ),
    )
