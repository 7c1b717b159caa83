"""A small dataset to build pairs from, and stand-in rules for the tests of the build machinery
(the rules themselves are tested on real sentences in test_rules_*.py)."""

import random

import pytest

from pairs.edits import Edit, EditRule, PairType, RuleOutcome
from pairs.services import rule_setup
from pairs.text import splice, tokens
from tests.factories import DatasetFactory, QuestionFactory

DIALOGUES = [
    (
        ["Did you book the tickets?", "Not yet, the site was down.", "Can you try again tonight?"],
        "I will try after dinner.",
    ),
    (["Where is the station?", "Two blocks north.", "Is it far from the bank?"], "It is next to the bank."),
    (["How was the film?", "Long, but good.", "Would you see it again?"], "I would go with my sister."),
    (["Is the shop open?", "Only until six.", "Should we hurry?"], "We can walk to the shop now."),
    (["Who called?", "Your brother.", "What did he want?"], "He wants to borrow the car."),
    (["Are you hungry?", "A little.", "Pizza or soup?"], "Soup, please."),
]


class LastWordRule(EditRule):
    """Replaces a word chosen by the generator with "WRONG": what the seed decides is visible."""

    type = PairType.SENTENCE

    def propose(self, *, context, response, rng: random.Random, per_question: int = 1) -> RuleOutcome:
        words = [t for t in tokens(response) if t.is_word]
        if len(words) < 5:
            return RuleOutcome([], skipped="too_short")
        chosen = rng.sample(words, k=min(per_question, len(words)))
        edits = []
        for word in chosen:
            incorrect, span = splice(response, word.start, word.end, "WRONG")
            edits.append(
                Edit(self.type, "stand_in", incorrect, (word.start, word.end), span, details={"word": word.text})
            )
        return RuleOutcome(edits)


class BrokenRule(EditRule):
    """Fails on responses that mention the bank."""

    type = PairType.FUNCTION

    def propose(self, *, context, response, rng, per_question=1) -> RuleOutcome:
        if "bank" in response:
            raise RuntimeError("the rule failed")
        return RuleOutcome([], skipped="no_function_word")


@pytest.fixture
def stand_in_rules(monkeypatch):
    monkeypatch.setitem(rule_setup.RULE_FACTORIES, PairType.SENTENCE, lambda inputs: LastWordRule())
    monkeypatch.setitem(rule_setup.RULE_FACTORIES, PairType.FUNCTION, lambda inputs: BrokenRule())


@pytest.fixture
def pair_dataset(db):
    """A test-set dataset "chat" of six questions, three turns of context each."""
    dataset = DatasetFactory(name="chat")
    for turns, ground_truth in DIALOGUES:
        QuestionFactory(dataset=dataset, ground_truth=ground_truth, context__turns=turns)
    return dataset


@pytest.fixture
def built_set(pair_dataset, stand_in_rules):
    """The set "set-a": five pending pairs of the stand-in rule, built from "chat"."""
    from pairs.services.building import pair_set_for_build, pairs_build

    pair_set = pair_set_for_build(
        dataset_name="chat", set_name="set-a", types=["sentence"], criteria=[], per_question=1, seed=0
    )
    pairs_build(pair_set=pair_set)
    return pair_set
