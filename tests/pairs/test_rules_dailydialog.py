"""Both English rules over the first 1,000 responses of DailyDialog's test split: nothing raises,
every response is edited or skipped with a reason, every edit changes only its spans."""

import random
from collections import Counter

import pytest

from pairs.edits import PairType
from pairs.rules.function_words import FunctionWordRule
from pairs.rules.sentence_type import SUBTYPES, SentenceTypeRule

# the rules over real sentences: pure Python, the same on any database engine
pytestmark = [pytest.mark.shared_data, pytest.mark.heavy]

RESPONSES = 1000


def dailydialog_responses(shared_data, limit: int) -> list[tuple[list[str], str]]:
    """(context, response) for every turn after the first, in file order."""
    path = shared_data / "dailydialog" / "test" / "dialogues_test.txt"
    out = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            turns = [turn.strip() for turn in line.split("__eou__") if turn.strip()]
            for i in range(1, len(turns)):
                out.append((turns[:i], turns[i]))
                if len(out) == limit:
                    return out
    return out


@pytest.mark.parametrize(
    ("rule", "subtypes"),
    [(SentenceTypeRule(), SUBTYPES), (FunctionWordRule(), ("preposition", "particle"))],
    ids=["sentence", "function"],
)
def test_the_rule_edits_or_skips_every_response_and_changes_only_its_spans(shared_data, rule, subtypes):
    responses = dailydialog_responses(shared_data, RESPONSES)
    assert len(responses) == RESPONSES
    counts: Counter[str] = Counter()
    edited = skipped = 0
    for i, (context, response) in enumerate(responses):
        outcome = rule.propose(context=context, response=response, rng=random.Random(i), per_question=2)
        if not outcome.edits:
            assert outcome.skipped, response
            skipped += 1
            counts[f"skipped: {outcome.skipped}"] += 1
            continue
        edited += 1
        assert not outcome.skipped
        assert len(outcome.edits) <= 2
        for edit in outcome.edits:
            counts[edit.subtype] += 1
            assert edit.type == rule.type and edit.subtype in subtypes
            assert edit.incorrect != response
            (a0, a1), (b0, b1) = edit.span, edit.incorrect_span
            assert 0 <= a0 <= a1 <= len(response) and 0 <= b0 <= b1 <= len(edit.incorrect)
            assert response[:a0] == edit.incorrect[:b0], (response, edit)
            assert response[a1:] == edit.incorrect[b1:], (response, edit)
    assert edited + skipped == RESPONSES
    assert sum(n for key, n in counts.items() if key.startswith("skipped")) == skipped
    assert edited > RESPONSES // 20  # the rules are conservative, not idle
    print(f"\n{type(rule).__name__} on {RESPONSES} DailyDialog test responses (per_question=2): {edited} edited")
    for key, n in counts.most_common():
        print(f"  {key}: {n}")
    assert rule.type in PairType.ALL
