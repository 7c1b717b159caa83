"""The malformed-file corpus: every file is built here from an importer's valid file, with what the
importer must answer: an error at a line (or item) and field, or a counted skip.

Line numbers are those of the file (1 is the first line); the valid files have three records, on
lines 1-3 (the scores CSV has its header on line 1; the ratings JSON has "[" on line 1 and items
0-2 on lines 2-4).
"""

from tests.security.importers_build import Case, encoded, whole
from tests.security.importers_cases_json import DIALOGUES_JSONL, HUMAN, PAIRS_JSONL, TESTSET_HF_CASES, TESTSET_SCORES
from tests.security.importers_cases_text import (
    APPROVALS,
    DIALOGUES_DD,
    REPOSITORY_LINES,
    REPOSITORY_OTHER,
    SCORES_CSV,
    TESTSET_TSV,
)
from tests.security.importers_worlds import IMPORTERS

__all__ = ["CASES", "Case"]

BINARY = bytes(range(256)) * 8
GZIP_GARBAGE = b"\x1f\x8b\x08\x00" + bytes(range(200, 256)) * 4
LINE_BASED = [name for name in IMPORTERS if name not in ("approvals-csv", "human-ratings")]

# What every importer must refuse, whatever its format.
GENERIC = [
    case
    for importer in IMPORTERS
    for case in [
        Case(importer, "empty", whole(b"")),
        Case(importer, "blank-lines-only", whole(b"\n  \n\t\r\n\n")),
        Case(importer, "nul-bytes-only", whole(b"\x00" * 64)),
        Case(importer, "binary", whole(BINARY)),
        Case(importer, "gzip-garbage", whole(GZIP_GARBAGE), suffix=".gz"),
        Case(importer, "utf-16", encoded("utf-16"), line=1 if importer in LINE_BASED else None),
        Case(importer, "utf-16-without-bom", encoded("utf-16-le"), line=1 if importer in LINE_BASED else None),
        Case(importer, "utf-32", encoded("utf-32"), line=1 if importer in LINE_BASED else None),
    ]
]
# Classic Mac OS line ends: one line that would silently merge every record.
CR_ONLY = [Case(importer, "cr-only-line-ends", encoded("utf-8", eol="\r"), line=1) for importer in LINE_BASED]

CASES = GENERIC + CR_ONLY + DIALOGUES_DD + DIALOGUES_JSONL + TESTSET_TSV + TESTSET_SCORES + SCORES_CSV
CASES += REPOSITORY_LINES + REPOSITORY_OTHER + APPROVALS + HUMAN + PAIRS_JSONL + TESTSET_HF_CASES
