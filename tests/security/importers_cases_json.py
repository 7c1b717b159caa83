"""Malformed files of the JSON formats: JSONL dialogues, human_scores.jsonl, a Hugging Face test set
folder's data file, contrastive pairs, and Zhao et al.'s ratings JSON."""

import json

from tests.security.importers_build import (
    LATIN1,
    TOO_LONG,
    Build,
    Case,
    append,
    cut_last_line,
    gzipped,
    lines,
    put,
    swap,
    whole,
)
from tests.security.importers_worlds import TESTSET_HF, ZHAO, zhao_item

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
    Case(
        "dialogues-jsonl",
        "float-overflow-in-an-unknown-key",
        put(2, JSONL_BAD + '"response": "Go.", "w": 1e999999}'),
        2,
        "w",
    ),
    Case(
        "dialogues-jsonl",
        "negative-float-overflow",
        put(2, JSONL_BAD + '"response": "Go.", "m": {"w": [-1e400]}}'),
        2,
        "m.w[0]",
    ),
    Case("dialogues-jsonl", "cut-middle-line", put(2, JSONL_BAD), 2),
    Case("dialogues-jsonl", "trailing-garbage", swap(2, '"Coming!"}', '"Coming!"} x'), 2),
    Case("dialogues-jsonl", "two-objects-on-a-line", swap(2, '"Coming!"}', '"Coming!"}{"a": 1}'), 2),
    Case("dialogues-jsonl", "latin-1-byte", swap(2, "Coming", LATIN1), 2),
    Case("dialogues-jsonl", "bom-on-a-later-line", swap(2, "{", "\ufeff{"), 2),
    Case("dialogues-jsonl", "cut-last-line", cut_last_line(30), skip="skipped_truncated_last_line"),
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
    Case("testset-scores", "score-1e999999", scores_swap(2, 2, 4, "1e999999"), 2),
    Case("testset-scores", "score-with-a-surrogate", scores_swap(2, 2, 4, '"\\udfff"'), 2),
    Case("testset-scores", "ragged-score-lists", scores_swap(2, 1, 4, "1, 1"), 2, "candidate 1 scores"),
    Case("testset-scores", "empty-score-list", put(2, "[[], [1], [1]]"), 2, "ground truth scores"),
    Case("testset-scores", "nesting-60k-deep", put(2, "[" * 60_000), 2),
    Case("testset-scores", "not-json", put(2, "5 5 4 5 5"), 2),
    Case("testset-scores", "line-too-long", put(2, "[" + ", ".join(["1"] * 40_000) + "]"), 2),
    Case("testset-scores", "duplicate-key", put(2, '{"a": 1, "a": 2}'), 2),
]


def hf_put(n: int, **changes) -> Build:
    """Line ``n`` of the test set's data file with ``changes``; a value of ... removes the field."""
    record = {k: v for k, v in {**TESTSET_HF[n - 1], **changes}.items() if v is not ...}
    return put(n, json.dumps(record))


HF_LINE_2 = json.dumps(TESTSET_HF[1])
TESTSET_HF_CASES = [
    Case("testset-hf", "nul-escape-in-a-choice", swap(2, '"Coming!"', '"Com\\u0000ing!"'), 2, "choices[2]"),
    Case("testset-hf", "raw-nul-in-a-string", swap(2, "Coming!", "Com\x00ing!"), 2),
    Case("testset-hf", "lone-surrogate-in-context", swap(2, '"Almost."', '"Al\\ud800most."'), 2, "context[1]"),
    Case("testset-hf", "surrogate-in-a-key", swap(2, '"label"', '"\\ud800"'), 2),
    Case("testset-hf", "a-list-not-an-object", put(2, '["Ready?", "Coming!"]'), 2),
    Case("testset-hf", "derived-from-missing", hf_put(2, derived_from=...), 2, "derived_from"),
    Case("testset-hf", "unknown-field", swap(2, '"label"', '"colour": 1, "label"'), 2, "colour"),
    Case("testset-hf", "duplicate-key", swap(2, '"label": 2', '"label": 2, "label": 0'), 2, "label"),
    Case("testset-hf", "question-id-repeated", hf_put(2, question_id="corpus-0001"), 2, "question_id"),
    Case("testset-hf", "question-id-a-number", hf_put(2, question_id=2), 2, "question_id"),
    Case("testset-hf", "question-id-blank", hf_put(2, question_id=" "), 2, "question_id"),
    Case("testset-hf", "context-not-a-list", hf_put(2, context="Ready?"), 2, "context"),
    Case("testset-hf", "context-empty", hf_put(2, context=[]), 2, "context"),
    Case("testset-hf", "context-turn-a-number", swap(2, '"Almost."', "7"), 2, "context[1]"),
    Case("testset-hf", "choices-a-string", hf_put(2, choices="Coming!"), 2, "choices"),
    Case(
        "testset-hf",
        "one-choice-only",
        hf_put(2, choices=["Coming!"], label=0, sources=["ground_truth"], scores=[[]]),
        2,
        "choices",
    ),
    Case("testset-hf", "blank-choice", swap(2, '"The shop was closed."', '" \\t "'), 2, "choices[1]"),
    Case("testset-hf", "choice-too-long", swap(2, '"The shop was closed."', json.dumps(TOO_LONG)), 2, "choices[1]"),
    Case("testset-hf", "choice-repeats-another", swap(2, '"Coming!"', '"the shop  was closed."'), 2, "choices[2]"),
    Case(
        "testset-hf",
        "choice-count-changes",
        hf_put(
            2, choices=["A.", "B.", "C.", "D."], label=3, sources=["lexical"] * 3 + ["ground_truth"], scores=[[]] * 4
        ),
        2,
        "choices",
    ),
    Case("testset-hf", "label-out-of-range", swap(2, '"label": 2', '"label": 3'), 2, "label"),
    Case("testset-hf", "label-negative", swap(2, '"label": 2', '"label": -1'), 2, "label"),
    Case("testset-hf", "label-a-boolean", swap(2, '"label": 2', '"label": true'), 2, "label"),
    Case("testset-hf", "label-a-string", swap(2, '"label": 2', '"label": "2"'), 2, "label"),
    Case("testset-hf", "label-of-5000-digits", swap(2, '"label": 2', '"label": ' + "9" * 5000), 2),
    Case("testset-hf", "float-overflow-in-an-unknown-key", swap(2, '"label"', '"w": -1e999999, "label"'), 2, "w"),
    Case("testset-hf", "sources-too-short", hf_put(2, sources=["lexical", "ground_truth"]), 2, "sources"),
    Case("testset-hf", "source-unknown", swap(2, '"lexical"', '"bm25"'), 2, "sources[0]"),
    Case(
        "testset-hf", "ground-truth-source-on-a-false-choice", swap(2, '"lexical"', '"ground_truth"'), 2, "sources[0]"
    ),
    Case("testset-hf", "scores-too-short", hf_put(2, scores=[[1], [1]]), 2, "scores"),
    Case("testset-hf", "scores-a-number", hf_put(2, scores=[[1], 3, [1]]), 2, "scores[1]"),
    Case("testset-hf", "score-6", hf_put(2, scores=[[1], [1, 6], [4]]), 2, "scores[1][1]"),
    Case("testset-hf", "score-negative", hf_put(2, scores=[[1], [1, -1], [4]]), 2, "scores[1][1]"),
    Case("testset-hf", "score-a-fraction", hf_put(2, scores=[[1], [1, 4.5], [4]]), 2, "scores[1][1]"),
    Case("testset-hf", "score-a-boolean", hf_put(2, scores=[[1], [1, True], [4]]), 2, "scores[1][1]"),
    Case("testset-hf", "a-thousand-scores-for-a-choice", hf_put(2, scores=[[1], [1] * 1000, [4]]), 2, "scores[1]"),
    Case(
        "testset-hf",
        "two-thousand-choices",
        hf_put(2, choices=[f"C{i}." for i in range(2000)], label=0, sources=["lexical"] * 2000, scores=[[]] * 2000),
        2,
        "choices",
    ),
    Case("testset-hf", "score-nan", swap(2, "[4, 5, 5]", "[4, NaN, 5]"), 2),
    Case("testset-hf", "derived-from-no-question", hf_put(3, derived_from="corpus-0009"), 3, "derived_from"),
    Case("testset-hf", "derived-from-itself", hf_put(3, derived_from="corpus-0003"), 3, "derived_from"),
    Case("testset-hf", "derived-on-another-context", hf_put(3, context=["Hi.", "Hello.", "Tea?"]), 3, "context"),
    Case(
        "testset-hf",
        "derived-ground-truth-is-the-originals",
        hf_put(3, choices=["Yes, please.", "Blue is nice.", "The bus is late."]),
        3,
        "label",
    ),
    Case("testset-hf", "shared-choice-scored-otherwise", hf_put(3, scores=[[4], [0], [5, 5, 5]]), 3, "scores[2]"),
    Case("testset-hf", "nesting-200k-deep", put(2, "[" * 200_000), 2),
    Case("testset-hf", "line-too-long", put(2, json.dumps(["word " * 120_000])), 2),
    Case("testset-hf", "cut-middle-line", put(2, HF_LINE_2[:40]), 2),
    Case("testset-hf", "trailing-garbage", put(2, HF_LINE_2 + " x"), 2),
    Case("testset-hf", "two-objects-on-a-line", put(2, HF_LINE_2 + HF_LINE_2), 2),
    Case("testset-hf", "latin-1-byte", swap(2, "Coming", LATIN1), 2),
    Case("testset-hf", "bom-on-a-later-line", swap(2, "{", "\ufeff{"), 2),
    Case(
        "testset-hf", "gzip-with-nul", gzipped(swap(2, '"Coming!"', '"Com\\u0000ing!"')), 2, "choices[2]", suffix=".gz"
    ),
    Case("testset-hf", "blank-line-between", lambda base: lines([base[0], "", *base[1:]]), skip="skipped_blank"),
    Case("testset-hf", "cut-last-line", cut_last_line(30), skip="skipped_truncated_last_line"),
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
    Case("human-ratings", "float-overflow-in-an-unknown-key", item_text(1, item(1)[:-2] + ', "w": 1e999999}'), 1, "w"),
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

PAIRS_JSONL = [
    Case("pairs-jsonl", "nul-escape", swap(2, '"Are you late?"', '"Are you\\u0000 late?"'), 2),
    Case("pairs-jsonl", "lone-surrogate-in-context", swap(2, '"Almost."', '"Al\\ud800most."'), 2, "context[1]"),
    Case("pairs-jsonl", "a-list-not-an-object", put(2, '["You are late.", "Are you late?"]'), 2),
    Case("pairs-jsonl", "incorrect-missing", swap(2, ', "incorrect": "Are you late?"', ""), 2, "incorrect"),
    Case("pairs-jsonl", "incorrect-same-as-correct", swap(2, '"Are you late?"', '"You are late."'), 2, "incorrect"),
    Case("pairs-jsonl", "context-not-a-list", swap(2, '["Ready?", "Almost."]', '"Ready?"'), 2, "context"),
    Case("pairs-jsonl", "type-with-spaces", swap(2, '"sentence"', '"sentence type"'), 2, "type"),
    Case("pairs-jsonl", "unknown-criterion", swap(3, '"el"', '"best"'), 3, "criterion"),
    Case("pairs-jsonl", "unknown-field", swap(2, '"type"', '"colour": 1, "type"'), 2, "colour"),
    Case(
        "pairs-jsonl",
        "spans-outside-the-text",
        swap(2, '"type"', '"span": [0, 99], "incorrect_span": [0, 1], "type"'),
        2,
        "span",
    ),
    Case("pairs-jsonl", "duplicate-key", swap(2, '"type": "sentence"', '"type": "sentence", "type": "x"'), 2, "type"),
    Case("pairs-jsonl", "nan", swap(2, '"type"', '"w": NaN, "type"'), 2),
    Case("pairs-jsonl", "float-overflow-in-an-unknown-key", swap(2, '"type"', '"w": 1e999999, "type"'), 2, "w"),
    Case("pairs-jsonl", "nesting-200k-deep", put(2, "[" * 200_000), 2),
    Case(
        "pairs-jsonl",
        "the-same-pair-twice",
        put(
            3,
            '{"context": ["Ready?", "Almost."], "correct": "You are late.", '
            '"incorrect": "Are you late?", "type": "sentence"}',
        ),
        3,
    ),
    Case("pairs-jsonl", "correct-too-long", swap(2, '"You are late."', json.dumps(TOO_LONG)), 2, "correct"),
    Case("pairs-jsonl", "cut-middle-line", put(2, '{"context": ["Ready?", '), 2),
    Case("pairs-jsonl", "trailing-garbage", swap(2, '"sentence"}', '"sentence"} x'), 2),
    Case("pairs-jsonl", "latin-1-byte", swap(2, "late", LATIN1), 2),
    Case("pairs-jsonl", "bom-on-a-later-line", swap(2, "{", "\ufeff{"), 2),
    Case("pairs-jsonl", "cut-last-line", cut_last_line(30), skip="skipped_truncated_last_line"),
]
