"""FunctionWordRule on DailyDialog test turns: which prepositions and particles it swaps, which uses
it leaves alone, and the spans of the swap."""

import random

import pytest

from core.wordnet import wordnet_available
from pairs.edits import PairType
from pairs.rules.function_words import PARTICLE_SWAPS, PREPOSITION_SWAPS, FunctionWordRule


def propose(response: str, seed: int = 0, per_question: int = 1):
    return FunctionWordRule().propose(
        context=["A previous turn ."], response=response, rng=random.Random(seed), per_question=per_question
    )


def only_edit(response: str):
    outcome = propose(response, per_question=10)
    assert len(outcome.edits) == 1, outcome
    return outcome.edits[0]


@pytest.mark.parametrize(
    ("correct", "incorrect"),
    [
        ("I'm going to the hospital .", "I'm going from the hospital ."),
        (
            "Oh , that ’ s very kind of you . I am going to the Garden Hotel .",
            "Oh , that ’ s very kind of you . I am going from the Garden Hotel .",
        ),
        ("Certainly . Would you like it with ice cream ?", "Certainly . Would you like it without ice cream ?"),
        (
            "Yes , Chinese people love drinking tea so much . Some even claim they can't live without tea .",
            "Yes , Chinese people love drinking tea so much . Some even claim they can't live with tea .",
        ),
        (
            "My mother-in-law just went into the hospital .",
            "My mother-in-law just went out of the hospital .",
        ),
        ("OK . I will wait for you inside the restaurant", "OK . I will wait for you outside the restaurant"),
        (
            "It has a maximum speed of over 200 kilometers an hour .",
            "It has a maximum speed of under 200 kilometers an hour .",
        ),
    ],
)
def test_a_preposition_is_replaced_by_its_opposite(correct, incorrect):
    edit = only_edit(correct)
    assert (edit.type, edit.subtype) == (PairType.FUNCTION, "preposition")
    assert edit.incorrect == incorrect


@pytest.mark.parametrize(
    ("correct", "incorrect", "verb"),
    [
        ("Push the red button on the mike to turn it on .", "Push the red button on the mike to turn it off .", "turn"),
        ("Come in please .", "Come out please .", "come"),
        (
            "Well , I guess I will have to drive back down then .",
            "Well , I guess I will have to drive back up then .",
            "back",
        ),
    ],
)
def test_a_particle_is_replaced_when_its_verb_has_the_opposite_phrasal_verb(correct, incorrect, verb):
    edit = only_edit(correct)
    assert edit.subtype == "particle"
    assert edit.incorrect == incorrect
    assert edit.details["verb"] == verb


def test_the_case_of_the_word_is_kept():
    edit = only_edit("Before the meeting , I was nervous .")
    assert edit.incorrect == "After the meeting , I was nervous ."


def test_the_seed_picks_among_the_listed_replacements():
    assert len(PREPOSITION_SWAPS["near"]) == 2
    seen = {propose("Would you like to sit near the window ?", seed=seed).edits[0].incorrect for seed in range(20)}
    assert seen == {
        "Would you like to sit far from the window ?",
        "Would you like to sit away from the window ?",
    }


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        ("I ’ m fine . Thank you .", "no_function_word"),
        ("That ’ s out of the question .", "fixed_expression_only"),
        # "with" completes an adjectival participle: "satisfied without" is no English
        ("You can get a refund if you're not satisfied with your purchase .", "fixed_expression_only"),
        ("How can you be infatuated with horror films ?", "fixed_expression_only"),
        ("I want to go jogging .", "infinitive_only"),
        ("That's over on Callaway Street , isn't it ?", "unsafe_context"),
        ("I never bought food from the cafeteria .", "unsafe_context"),  # "from" without a movement
        ("Yes , the towel was named after its designer Gustave Eiffel .", "unsafe_context"),
        ("Let ’ s go check it out .", "unsafe_context"),  # "check it out" is not the opposite of "check in"
        ("Oh , and it's out of paper .", "unsafe_context"),
    ],
)
def test_uses_that_a_swap_would_break_are_skipped_with_their_reason(response, reason):
    outcome = propose(response)
    assert outcome.edits == []
    assert outcome.skipped == reason


def test_only_the_phrasal_verbs_listed_for_a_particle_are_edited():
    assert "pick" not in PARTICLE_SWAPS["up"][1]
    assert propose("Can you pick up the kids ?").skipped == "unsafe_context"


RESPONSE_WITH_CHOICES = "I am going to the store . Would you like it with ice cream ? Come in please ."


def test_the_spans_hold_the_replaced_word_and_nothing_else():
    for edit in propose(RESPONSE_WITH_CHOICES, per_question=3).edits:
        (a0, a1), (b0, b1) = edit.span, edit.incorrect_span
        assert RESPONSE_WITH_CHOICES[a0:a1] == edit.details["word"]
        assert edit.incorrect[b0:b1] == edit.details["replacement"]
        assert RESPONSE_WITH_CHOICES[:a0] == edit.incorrect[:b0]
        assert RESPONSE_WITH_CHOICES[a1:] == edit.incorrect[b1:]


def test_the_same_seed_gives_the_same_edit_and_seeds_reach_every_position():
    assert propose(RESPONSE_WITH_CHOICES, seed=5) == propose(RESPONSE_WITH_CHOICES, seed=5)
    words = {propose(RESPONSE_WITH_CHOICES, seed=seed).edits[0].details["word"] for seed in range(30)}
    assert words == {"to", "with", "in"}


def test_per_question_caps_the_edits_at_different_positions():
    assert len(propose(RESPONSE_WITH_CHOICES, per_question=1).edits) == 1
    edits = propose(RESPONSE_WITH_CHOICES, per_question=2).edits
    assert len(edits) == 2 and edits[0].span != edits[1].span
    assert len(propose(RESPONSE_WITH_CHOICES, per_question=10).edits) == 3


@pytest.mark.skipif(
    not wordnet_available(), reason="WordNet missing: install wordnet-base (apt-get install wordnet-base)"
)
def test_wordnet_inflections_find_the_verb_of_a_particle():
    # "jumped" is not in the built-in verb list: WordNet undoes its -ed
    edit = only_edit("I ’ m glad to hear that Pear has finally jumped on the bandwagon .")
    assert edit.incorrect == "I ’ m glad to hear that Pear has finally jumped off the bandwagon ."
