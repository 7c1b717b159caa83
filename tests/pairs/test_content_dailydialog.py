"""The content-word rule on DailyDialog: the bigram model of the train turns, 300 test responses."""

import random
import time
from collections import Counter

import pytest

from core.wordnet import WORDNET_INSTALL_HINT, wordnet_available
from pairs.bigram import BigramLM
from pairs.edits import Criterion
from pairs.nouns import NounLexicon
from pairs.rules.content_words import ContentWordRule

# the rules over real sentences: pure Python, the same on any database engine
pytestmark = [pytest.mark.shared_data, pytest.mark.heavy]

RESPONSES = 300


def dialogues(path):
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            yield [turn.strip() for turn in line.split("__eou__") if turn.strip()]


def test_the_rule_edits_dailydialog_test_responses_with_a_model_of_the_train_turns(shared_data):
    if not wordnet_available():
        pytest.skip(f"WordNet is missing: {WORDNET_INSTALL_HINT}")
    folder = shared_data / "dailydialog"
    started = time.perf_counter()
    lm = BigramLM.fit(turn for dialogue in dialogues(folder / "train" / "dialogues_train.txt") for turn in dialogue)
    fitted = time.perf_counter()
    rule = ContentWordRule(lm, NounLexicon.load())
    ready = time.perf_counter()

    questions = [
        (turns[max(0, i - 3) : i], turns[i])
        for turns in dialogues(folder / "test" / "dialogues_test.txt")
        for i in range(1, len(turns))
    ]
    questions = random.Random(0).sample(questions, RESPONSES)
    skipped, edits = Counter(), Counter()
    for n, (context, response) in enumerate(questions):
        outcome = rule.propose(context=context, response=response, rng=random.Random(n))
        if outcome.skipped:
            skipped[outcome.skipped] += 1
        for edit in outcome.edits:
            edits[edit.criterion] += 1
            start, end = edit.span
            assert response[start:end] == edit.details["word"]
            assert edit.incorrect == response[:start] + edit.details["replacement"] + response[end:]
            assert edit.details["replacement"].lower() != edit.details["word"].lower()
        assert bool(outcome.edits) != bool(outcome.skipped)
    done = time.perf_counter()

    edited = RESPONSES - sum(skipped.values())
    assert edits[Criterion.EQUALLY_LIKELY] == edits[Criterion.MOST_LIKELY] == edited
    assert edited > RESPONSES / 2  # most DailyDialog responses have a noun
    print(
        f"\nfit {fitted - started:.1f}s ({len(lm)} words), rule {ready - fitted:.1f}s ({len(rule.vocabulary)} nouns), "
        f"{(done - ready) / RESPONSES * 1000:.1f} ms per response; edited {edited}/{RESPONSES}, "
        f"skipped {dict(skipped)}"
    )
