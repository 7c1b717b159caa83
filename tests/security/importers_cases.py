"""The malformed-file corpus: every file is built here from an importer's valid file, with what the
importer must answer: an error at a line (or item) and field, or a counted skip.

Line numbers are those of the file (1 is the first line); the valid files have three records, on
lines 1-3 (the scores CSV has its header on line 1; the ratings JSON has "[" on line 1 and items
0-2 on lines 2-4).
"""

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass

from tests.security.importers_worlds import IMPORTERS, ZHAO, zhao_item

Build = Callable[[list[str]], bytes]


@dataclass(frozen=True)
class Case:
    importer: str
    name: str
    build: Build  # the file's bytes, from the lines of the importer's valid file
    line: int | None = None  # the error names this line (item, for the ratings JSON), if given
    field: str | None = None  # ... and this field, if given
    skip: str | None = None  # or: the import succeeds and this report counter says 1
    suffix: str = ""  # added to the file name (".gz")

    @property
    def id(self) -> str:
        return f"{self.importer}:{self.name}"


def lines(base: list[str], eol: str = "\n") -> bytes:
    return "".join(line + eol for line in base).encode("utf-8")


def put(n: int, text: str) -> Build:
    """Line ``n`` (1-based) becomes ``text``."""
    return lambda base: lines([text if i == n else line for i, line in enumerate(base, 1)])


def swap(n: int, old: str, new: str | bytes) -> Build:
    """In line ``n``, ``old`` becomes ``new`` (raw bytes, for what UTF-8 text cannot hold)."""

    def build(base: list[str]) -> bytes:
        assert old in base[n - 1], (old, base[n - 1])
        encoded = [line.encode("utf-8") for line in base]
        raw = new if isinstance(new, bytes) else new.encode("utf-8")
        encoded[n - 1] = encoded[n - 1].replace(old.encode("utf-8"), raw, 1)
        return b"".join(line + b"\n" for line in encoded)

    return build


def append(text: str | bytes) -> Build:
    return lambda base: lines(base) + (text if isinstance(text, bytes) else text.encode("utf-8"))


def whole(data: bytes) -> Build:
    return lambda base: data


def cut_last_line(keep: int) -> Build:
    """The last line keeps ``keep`` characters and loses its newline (a cut download)."""
    return lambda base: lines(base[:-1]) + base[-1][:keep].encode("utf-8")


def encoded(codec: str, eol: str = "\n") -> Build:
    return lambda base: "".join(line + eol for line in base).encode(codec)


def half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def gzipped(build: Build) -> Build:
    return lambda base: gzip.compress(build(base))


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

NUL = "\x00"
LATIN1 = b"caf\xe9"
SURROGATE_BYTES = b"\xed\xa0\x80"  # U+D800 written as if it were a character (CESU-8 / WTF-8)
OVERLONG_SLASH = b"\xc0\xaf"  # "/" in two bytes: invalid UTF-8
TOO_LONG = "word " * 600  # 3,000 characters: over WELLCHOSEN_MAX_UTTERANCE_CHARS (2,000)

DIALOGUES_DD = [
    Case("dialogues-dailydialog", "nul-in-a-turn", swap(2, "A little", "A lit\x00tle"), 2, "turn 2"),
    Case("dialogues-dailydialog", "latin-1-byte", swap(2, "umbrella", LATIN1), 2, "turn 3"),
    Case("dialogues-dailydialog", "surrogate-bytes", swap(2, "raining", SURROGATE_BYTES), 2, "turn 1"),
    Case("dialogues-dailydialog", "overlong-utf-8", swap(2, "raining", OVERLONG_SLASH), 2, "turn 1"),
    Case("dialogues-dailydialog", "text-after-last-eou", swap(2, "I will . __eou__", "I will . __eou__ And"), 2),
    Case("dialogues-dailydialog", "empty-turn", swap(2, "A little .", " "), 2, "turn 2"),
    Case("dialogues-dailydialog", "turn-too-long", swap(2, "A little .", TOO_LONG), 2, "turn 2"),
    Case("dialogues-dailydialog", "line-too-long", put(2, "word " * 120_000 + "__eou__"), 2),
    Case("dialogues-dailydialog", "cut-last-line", cut_last_line(20), skip="skipped_truncated_last_line"),
    Case("dialogues-dailydialog", "all-dialogues-too-short", whole(b"One . __eou__ Two . __eou__\n" * 3)),
    Case("dialogues-dailydialog", "gzip-with-nul", gzipped(swap(3, "Almost", "Al\x00most")), 3, "turn 2", suffix=".gz"),
]

JSONL_BAD = '{"context": ["Ready?", "Almost.", "Hurry up."], '
DIALOGUES_JSONL = [
    Case("dialogues-jsonl", "nul-escape", swap(2, '"Coming!"', '"Com\\u0000ing!"'), 2, "response"),
    Case("dialogues-jsonl", "raw-nul-in-string", swap(2, "Coming!", "Com\x00ing!"), 2),
    Case("dialogues-jsonl", "lone-high-surrogate", swap(2, '"Almost."', '"Al\\ud800most."'), 2, "context[1]"),
    Case("dialogues-jsonl", "lone-low-surrogate", swap(2, '"Almost."', '"\\udc00"'), 2, "context[1]"),
    Case("dialogues-jsonl", "reversed-surrogate-pair", swap(2, '"Coming!"', '"\\udc00\\ud800"'), 2, "response"),
    Case("dialogues-jsonl", "surrogate-in-a-key", swap(2, '"response"', '"\\ud800"'), 2),
    Case(
        "dialogues-jsonl",
        "nul-in-a-speaker",
        put(2, JSONL_BAD + '"response": "Go.", "speakers": ["A", "\\u0000", "A"]}'),
        2,
        "speakers[1]",
    ),
    Case("dialogues-jsonl", "nesting-200k-deep", put(2, "[" * 200_000), 2),
    Case("dialogues-jsonl", "nesting-200k-deep-object", put(2, '{"a":' * 100_000), 2),
    Case(
        "dialogues-jsonl",
        "nesting-100-deep",
        put(2, JSONL_BAD + '"response": "Go.", "x": ' + "[" * 100 + "]" * 100 + "}"),
        2,
    ),
    Case("dialogues-jsonl", "a-list-not-an-object", put(2, '["Ready?", "Coming!"]'), 2),
    Case("dialogues-jsonl", "a-string-not-an-object", put(2, '"Ready?"'), 2),
    Case("dialogues-jsonl", "context-not-a-list", put(2, '{"context": "Ready?", "response": "Go."}'), 2, "context"),
    Case("dialogues-jsonl", "context-empty", put(2, '{"context": [], "response": "Go."}'), 2, "context"),
    Case("dialogues-jsonl", "context-turn-a-number", swap(2, '"Almost."', "7"), 2, "context[1]"),
    Case("dialogues-jsonl", "context-turn-blank", swap(2, '"Almost."', '" \\t "'), 2, "context[1]"),
    Case("dialogues-jsonl", "response-missing", put(2, '{"context": ["Ready?"]}'), 2, "response"),
    Case("dialogues-jsonl", "response-null", swap(2, '"Coming!"', "null"), 2, "response"),
    Case("dialogues-jsonl", "response-too-long", swap(2, '"Coming!"', json.dumps(TOO_LONG)), 2, "response"),
    Case(
        "dialogues-jsonl",
        "speakers-wrong-length",
        put(2, JSONL_BAD + '"response": "Go.", "speakers": ["A"]}'),
        2,
        "speakers",
    ),
    Case(
        "dialogues-jsonl",
        "duplicate-key",
        swap(2, '"response": "Coming!"', '"response": "Coming!", "response": "No."'),
        2,
        "response",
    ),
    Case("dialogues-jsonl", "nan", put(2, JSONL_BAD + '"response": "Go.", "weight": NaN}'), 2),
    Case("dialogues-jsonl", "infinity", put(2, JSONL_BAD + '"response": "Go.", "weight": -Infinity}'), 2),
    Case(
        "dialogues-jsonl",
        "integer-of-5000-digits",
        put(2, JSONL_BAD + '"response": "Go.", "n": ' + "9" * 5000 + "}"),
        2,
    ),
    Case("dialogues-jsonl", "cut-middle-line", put(2, JSONL_BAD), 2),
    Case("dialogues-jsonl", "trailing-garbage", swap(2, '"Coming!"}', '"Coming!"} x'), 2),
    Case("dialogues-jsonl", "two-objects-on-a-line", swap(2, '"Coming!"}', '"Coming!"}{"a": 1}'), 2),
    Case("dialogues-jsonl", "latin-1-byte", swap(2, "Coming", LATIN1), 2),
    Case("dialogues-jsonl", "bom-on-a-later-line", swap(2, "{", "\ufeff{"), 2),
    Case("dialogues-jsonl", "cut-last-line", cut_last_line(30), skip="skipped_truncated_last_line"),
]

TESTSET_TSV = [
    Case("testset-tsv", "too-few-fields", put(1, "Hi.\tHello.\tCoffee?\tYes, please."), 1),
    Case("testset-tsv", "field-count-changes", swap(2, "He went home.", "He went home.\tExtra."), 2),
    Case("testset-tsv", "blank-line-between", lambda base: lines([base[0], "", *base[1:]]), 2),
    Case("testset-tsv", "empty-candidate", swap(2, "The shop was closed.", ""), 2, "candidate 1"),
    Case("testset-tsv", "blank-ground-truth", swap(2, "Coming!", "  "), 2, "ground truth"),
    Case("testset-tsv", "nul-in-a-candidate", swap(2, "He went home.", "He went\x00home."), 2, "candidate 2"),
    Case("testset-tsv", "latin-1-byte", swap(2, "Coming!", LATIN1), 2, "ground truth"),
    Case("testset-tsv", "surrogate-bytes", swap(2, "Almost.", SURROGATE_BYTES), 2, "context 2"),
    Case("testset-tsv", "field-too-long", swap(2, "Ready?", TOO_LONG), 2, "context 1"),
    Case("testset-tsv", "line-too-long", put(2, "\t".join(["word " * 60_000] * 6)), 2),
    Case("testset-tsv", "candidate-repeats-another", swap(2, "He went home.", "the shop was closed"), 2, "candidate 2"),
    Case("testset-tsv", "cut-last-line", cut_last_line(25), 3),
]

SCORE_LISTS = [[5, 5, 4, 5, 5], [1, 1, 2, 1, 1], [0, 1, 1, 1, 1]]


def scores_swap(n: int, i: int, j: int, value: str) -> Build:
    """In line ``n`` of human_scores.jsonl, score ``j`` of list ``i`` becomes ``value`` (JSON text)."""
    score_lists = [[str(v) for v in scores] for scores in SCORE_LISTS]
    score_lists[i][j] = value
    return put(n, "[" + ", ".join("[" + ", ".join(scores) + "]" for scores in score_lists) + "]")


TESTSET_SCORES = [
    Case("testset-scores", "fewer-lines-than-the-tsv", lambda base: lines(base[:2])),
    Case("testset-scores", "more-lines-than-the-tsv", append(json.dumps(SCORE_LISTS) + "\n"), 4),
    Case("testset-scores", "too-few-score-lists", put(2, "[[5, 5, 4, 5, 5], [1, 1, 2, 1, 1]]"), 2),
    Case("testset-scores", "an-object-not-a-list", put(2, '{"scores": []}'), 2),
    Case("testset-scores", "score-6", scores_swap(2, 1, 2, "6"), 2, "candidate 1 scores, annotator 3"),
    Case("testset-scores", "score-negative", scores_swap(2, 1, 2, "-1"), 2, "candidate 1 scores, annotator 3"),
    Case("testset-scores", "score-a-string", scores_swap(2, 0, 0, '"5"'), 2, "ground truth scores, annotator 1"),
    Case("testset-scores", "score-a-boolean", scores_swap(2, 2, 4, "true"), 2, "candidate 2 scores, annotator 5"),
    Case("testset-scores", "score-a-fraction", scores_swap(2, 2, 4, "4.5"), 2, "candidate 2 scores, annotator 5"),
    Case("testset-scores", "score-nan", scores_swap(2, 2, 4, "NaN"), 2),
    Case("testset-scores", "score-of-5000-digits", scores_swap(2, 2, 4, "9" * 5000), 2),
    Case("testset-scores", "score-with-a-surrogate", scores_swap(2, 2, 4, '"\\udfff"'), 2),
    Case("testset-scores", "ragged-score-lists", scores_swap(2, 1, 4, "1, 1"), 2, "candidate 1 scores"),
    Case("testset-scores", "empty-score-list", put(2, "[[], [1], [1]]"), 2, "ground truth scores"),
    Case("testset-scores", "nesting-60k-deep", put(2, "[" * 60_000), 2),
    Case("testset-scores", "not-json", put(2, "5 5 4 5 5"), 2),
    Case("testset-scores", "line-too-long", put(2, "[" + ", ".join(["1"] * 40_000) + "]"), 2),
    Case("testset-scores", "duplicate-key", put(2, '{"a": 1, "a": 2}'), 2),
]

SCORES_CSV = [
    Case("scores-csv", "header-only", lambda base: lines(base[:1])),
    Case("scores-csv", "five-fields", lambda base: lines([*base[:2], base[2] + ",extra", base[3]]), 3),
    Case("scores-csv", "three-fields", lambda base: lines([*base[:2], base[2].rsplit(",", 1)[0], base[3]]), 3),
    Case("scores-csv", "an-empty-trailing-field", lambda base: lines([*base[:2], base[2] + ",", base[3]]), 3),
    Case("scores-csv", "quoted-newline", lambda base: lines([*base[:2], base[2].replace(",r1,", ',"r\n1",')]), 3),
    Case("scores-csv", "question-id-not-a-number", lambda base: lines([*base[:2], "x" + base[2]]), 3, "question_id"),
    Case(
        "scores-csv",
        "candidate-id-of-21-digits",
        lambda base: lines([*base[:2], base[2].split(",")[0] + ",100000000000000000000,r1,1"]),
        3,
        "candidate_id",
    ),
    Case(
        "scores-csv",
        "candidate-id-negative",
        lambda base: lines([*base[:2], base[2].split(",")[0] + ",-3,r1,1"]),
        3,
        "candidate_id",
    ),
    Case(
        "scores-csv",
        "unknown-candidate",
        lambda base: lines([*base[:2], base[2].split(",")[0] + ",999999,r1,1"]),
        3,
        "candidate_id",
    ),
    Case(
        "scores-csv",
        "candidate-of-another-question",
        lambda base: lines([*base[:2], base[3].split(",")[0] + "," + ",".join(base[2].split(",")[1:])]),
        3,
        "question_id",
    ),
    Case("scores-csv", "score-6", lambda base: lines([*base[:2], base[2][:-1] + "6"]), 3, "score"),
    Case("scores-csv", "score-negative", lambda base: lines([*base[:2], base[2][:-1] + "-1"]), 3, "score"),
    Case("scores-csv", "score-a-fraction", lambda base: lines([*base[:2], base[2][:-1] + "0.5"]), 3, "score"),
    Case(
        "scores-csv", "annotator-empty", lambda base: lines([*base[:2], base[2].replace(",r1,", ",,")]), 3, "annotator"
    ),
    Case(
        "scores-csv",
        "nul-in-annotator",
        lambda base: lines([*base[:2], base[2].replace(",r1,", ",r\x001,")]),
        3,
        "annotator",
    ),
    Case("scores-csv", "latin-1-byte", swap(3, ",r1,", b",r\xe91,"), 3),
    Case("scores-csv", "same-score-twice", lambda base: lines([*base, base[1]]), 5, "annotator"),
    Case("scores-csv", "header-column-twice", put(1, "question_id,candidate_id,annotator,score,score"), 1),
    Case("scores-csv", "header-lacks-a-column", put(1, "question_id,candidate_id,annotator"), 1),
    Case("scores-csv", "line-too-long", lambda base: lines([*base[:2], base[2] + "0" * 70_000]), 3),
    Case("scores-csv", "cut-last-line", cut_last_line(5), 4),
]

REPOSITORY_LINES = [
    Case("repository-lines", "nul", swap(2, "at home", "at\x00home"), 2, "text"),
    Case("repository-lines", "latin-1-byte", swap(2, "home", LATIN1), 2, "text"),
    Case("repository-lines", "surrogate-bytes", swap(2, "home", SURROGATE_BYTES), 2, "text"),
    Case("repository-lines", "overlong-utf-8", swap(2, "home", OVERLONG_SLASH), 2, "text"),
    Case("repository-lines", "png-header", lambda base: b"\x89PNG\r\n\x1a\n" + lines(base), 1, "text"),
    Case("repository-lines", "line-too-long", put(2, "word " * 2_000), skip="skipped_too_long"),
    Case("repository-lines", "utterance-too-long", put(2, "word " * 500), skip="skipped_too_long"),
    Case("repository-lines", "cut-last-line", cut_last_line(5), skip="skipped_unterminated_last_line"),
    Case("repository-lines", "only-punctuation", whole(b"...\n?!\n--\n")),
    Case("repository-lines", "only-formatting-tags", whole(b"<i></i>\n<b> </b>\n")),
    Case("repository-lines", "gzip-cut-in-half", lambda base: half(gzip.compress(lines(base) * 200)), suffix=".gz"),
    Case("repository-lines", "gzip-with-nul", gzipped(swap(2, "at home", "at\x00home")), 2, "text", suffix=".gz"),
]

REPOSITORY_OTHER = [
    Case("repository-cornell", "missing-fields", put(2, "L2 +++$+++ u0 +++$+++ I was at home."), 2, "text"),
    Case("repository-cornell", "nul-in-line-id", swap(2, "L2", "L\x002"), 2, "lineID"),
    Case("repository-cornell", "nul-in-text", swap(2, "at home", "at\x00home"), 2, "text"),
    Case("repository-cornell", "latin-1-byte", swap(2, "home", LATIN1), 2, "text"),
    Case("repository-cornell", "cut-last-line", cut_last_line(12), skip="skipped_unterminated_last_line"),
    Case("repository-dailydialog", "text-after-last-eou", swap(2, "I will . __eou__", "I will . __eou__ And"), 2),
    Case("repository-dailydialog", "nul-in-a-turn", swap(2, "A little", "A lit\x00tle"), 2, "turn 2"),
    Case("repository-dailydialog", "latin-1-byte", swap(2, "umbrella", LATIN1), 2, "turn 3"),
]

APPROVALS = [
    Case("approvals-csv", "header-only", lambda base: lines(base[:1])),
    Case("approvals-csv", "no-status-column", put(1, "worker_id,state,feedback"), 1, "header"),
    Case("approvals-csv", "no-worker-column", put(1, "name,status,feedback"), 1, "header"),
    Case("approvals-csv", "header-column-twice", put(1, "worker_id,status,status"), 1, "header"),
    Case("approvals-csv", "nul-in-header", put(1, "worker_id,status,feed\x00back"), 1, "header"),
    Case("approvals-csv", "bad-status", put(3, "P2,MAYBE,"), 3, "status"),
    Case("approvals-csv", "malformed-worker-id", put(2, "P 1,APPROVED,"), 2, "worker_id"),
    Case("approvals-csv", "nul-in-worker-id", put(2, "P\x001,APPROVED,"), 2, "worker_id"),
    Case("approvals-csv", "unknown-worker", put(3, "P9,REJECTED,too fast"), 3, "worker_id"),
    Case("approvals-csv", "nul-in-feedback", put(3, "P2,REJECTED,too\x00fast"), 3, "feedback"),
    Case("approvals-csv", "extra-field", put(3, "P2,REJECTED,too fast,again"), 3),
    Case("approvals-csv", "missing-field", put(3, "P2"), 3),
    Case("approvals-csv", "field-over-128k", put(3, "P2,REJECTED," + "x" * 200_000), 3),
    Case("approvals-csv", "unclosed-quote", put(3, 'P2,REJECTED,"too fast'), 3),
    Case("approvals-csv", "text-after-a-quote", put(3, 'P2,REJECTED,"too" fast'), 3),
    Case("approvals-csv", "latin-1-byte", swap(3, "fast", LATIN1), 3),
    Case("approvals-csv", "same-worker-twice-differently", append("P1,REJECTED,no\n"), 4, "worker_id"),
]


def item(i: int, **changes) -> str:
    """Line of item ``i`` of the ratings JSON, with ``changes`` (a value None removes the field)."""
    data = {**zhao_item(i), **changes}
    data = {k: v for k, v in data.items() if v is not None}
    return json.dumps(data) + ("," if i < len(ZHAO) - 1 else "")


def item_text(i: int, text: str) -> Build:
    return put(i + 2, text + ("," if i < len(ZHAO) - 1 else ""))


HUMAN = [
    Case("human-ratings", "not-a-list", whole(json.dumps(ZHAO[0]).encode()), None),
    Case("human-ratings", "cut-in-an-item", lambda base: lines(base)[:-60], 2),
    Case("human-ratings", "item-not-an-object", item_text(1, '"hello"'), 1),
    Case("human-ratings", "response-missing", put(3, item(1, response=None)), 1, "response"),
    Case("human-ratings", "response-a-number", put(3, item(1, response=5)), 1, "response"),
    Case(
        "human-ratings",
        "nul-escape-in-response",
        item_text(1, item(1)[:-1].replace("good to", "good\\u0000to")),
        1,
        "response",
    ),
    Case(
        "human-ratings",
        "surrogate-in-context",
        item_text(1, item(1)[:-1].replace("hello .", "\\ud83d .")),
        1,
        "context",
    ),
    Case(
        "human-ratings",
        "surrogate-in-model",
        item_text(1, item(1)[:-1].replace("S2S greedy", "S2S \\udc80")),
        1,
        "model",
    ),
    Case(
        "human-ratings",
        "nul-in-a-reference",
        item_text(1, item(1)[:-1].replace("glad to", "glad\\u0000to")),
        1,
        "reference[0]",
    ),
    Case("human-ratings", "nesting-200k-deep", item_text(1, "[" * 200_000), 1),
    Case("human-ratings", "duplicate-key", item_text(1, item(1)[:-2] + ', "response": "other"}'), 1, "response"),
    Case("human-ratings", "rating-nan", item_text(1, item(1)[:-1].replace("[5, 4, 4, 3]", "[5, NaN, 4, 3]")), 1),
    Case(
        "human-ratings",
        "rating-7",
        put(3, item(1, annotations={"appropriateness": [5, 7, 4, 3]})),
        1,
        "annotations.appropriateness",
    ),
    Case(
        "human-ratings",
        "rating-of-5000-digits",
        item_text(1, item(1)[:-1].replace("[5, 4, 4, 3]", "[5, " + "4" * 5000 + ", 4, 3]")),
        1,
    ),
    Case(
        "human-ratings",
        "ragged-ratings",
        put(3, item(1, annotations={"appropriateness": [5, 4]})),
        1,
        "annotations.appropriateness",
    ),
    Case("human-ratings", "same-item-twice", put(4, json.dumps(zhao_item(1))), 2, "dialogue_id"),
    Case("human-ratings", "latin-1-byte", swap(3, "good", LATIN1), None),
    Case("human-ratings", "trailing-comma", lambda base: lines([*base[:-2], base[-2] + ",", base[-1]]), 3),
]

CASES = GENERIC + CR_ONLY + DIALOGUES_DD + DIALOGUES_JSONL + TESTSET_TSV + TESTSET_SCORES + SCORES_CSV
CASES += REPOSITORY_LINES + REPOSITORY_OTHER + APPROVALS + HUMAN
