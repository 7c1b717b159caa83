"""Malformed files of the line, TSV and CSV formats: DailyDialog dialogues, released test sets,
score and approvals CSVs, repositories (plain lines, Cornell, DailyDialog)."""

import gzip

from tests.security.importers_build import (
    LATIN1,
    OVERLONG_SLASH,
    SURROGATE_BYTES,
    TOO_LONG,
    Case,
    append,
    cut_last_line,
    gzipped,
    half,
    lines,
    put,
    swap,
    whole,
)

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
