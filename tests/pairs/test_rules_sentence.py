"""SentenceTypeRule on DailyDialog test turns, in both the tokenised ("I ’ m fine .") and the plain
("I'm going to the hospital .") spelling the corpus mixes."""

import random

import pytest

from core.wordnet import wordnet_available
from pairs.edits import PairType
from pairs.rules.sentence_type import SUBTYPES, SentenceTypeRule

needs_wordnet = pytest.mark.skipif(
    not wordnet_available(), reason="WordNet missing: install wordnet-base to know verbs outside the built-in list"
)


def propose(response: str, seed: int = 0, per_question: int = 4):
    return SentenceTypeRule().propose(
        context=["A previous turn ."], response=response, rng=random.Random(seed), per_question=per_question
    )


def edit_of(response: str, subtype: str):
    outcome = propose(response)
    matching = [edit for edit in outcome.edits if edit.subtype == subtype]
    assert len(matching) == 1, outcome
    return matching[0]


def assert_spans_cover_the_change(correct: str, edit) -> None:
    (a0, a1), (b0, b1) = edit.span, edit.incorrect_span
    assert correct[:a0] == edit.incorrect[:b0]
    assert correct[a1:] == edit.incorrect[b1:]
    assert correct[a0:a1] != edit.incorrect[b0:b1]


@pytest.mark.parametrize(
    ("correct", "incorrect"),
    [
        ("The taxi drivers are on strike again .", "Are the taxi drivers on strike again ?"),
        ("He can spend more time with his grandchildren .", "Can he spend more time with his grandchildren ?"),
        ("I ’ m fine . Thank you .", "Am I fine ? Thank you ."),
        ("It's quit a big cafeteria .", "Is it quit a big cafeteria ?"),
    ],
)
def test_a_statement_becomes_a_question_by_moving_its_auxiliary(correct, incorrect):
    edit = edit_of(correct, "declarative_to_interrogative")
    assert edit.incorrect == incorrect
    assert edit.details["rule"] == "aux_inversion"


@pytest.mark.parametrize(
    ("correct", "incorrect"),
    [
        ("I got fired .", "Did I get fired ?"),
        (
            "She went over the edge after her son was killed in an accident .",
            "Did she go over the edge after her son was killed in an accident ?",
        ),
        ("She lives in San Francisco .", "Does she live in San Francisco ?"),
        ("That sounds like a good idea .", "Does that sound like a good idea ?"),
    ],
)
def test_a_statement_without_auxiliary_becomes_a_question_with_do_and_the_base_form(correct, incorrect):
    edit = edit_of(correct, "declarative_to_interrogative")
    assert edit.incorrect == incorrect
    assert edit.details["rule"] == "do_support"


@pytest.mark.parametrize(
    ("correct", "incorrect"),
    [
        ("Are you ready for the camping trip ?", "You are ready for the camping trip ."),
        ("Do you really have all of these drugs ?", "You really have all of these drugs ."),
        ("Did you win ?", "You won ."),
        ("can I buy stamps here ?", "I can buy stamps here ."),
    ],
)
def test_a_yes_no_question_becomes_a_statement(correct, incorrect):
    assert edit_of(correct, "interrogative_to_declarative").incorrect == incorrect


@pytest.mark.parametrize(
    ("correct", "incorrect"),
    [
        ("I'm going to the hospital .", "I'm not going to the hospital ."),
        ("I ’ m fine . Thank you .", "I ’ m not fine . Thank you ."),
        ("I got fired .", "I didn't get fired ."),
        ("He can spend more time with his grandchildren .", "He cannot spend more time with his grandchildren ."),
    ],
)
def test_an_affirmative_statement_is_negated(correct, incorrect):
    assert edit_of(correct, "affirmative_to_negative").incorrect == incorrect


@pytest.mark.parametrize(
    ("correct", "incorrect"),
    [
        ("Oh , there isn't a menu .", "Oh , there is a menu ."),
        ("It ’ s not too difficult to make a good impression .", "It ’ s too difficult to make a good impression ."),
        ("I didn ’ t pay much attention in art class at school .", "I paid much attention in art class at school ."),
        ("It doesn't work .", "It works ."),
    ],
)
def test_a_negative_statement_loses_its_negation(correct, incorrect):
    assert edit_of(correct, "negative_to_affirmative").incorrect == incorrect


@needs_wordnet
def test_a_verb_outside_the_built_in_list_is_known_through_wordnet():
    assert edit_of("I don ’ t trust auto-reverse .", "negative_to_affirmative").incorrect == "I trust auto-reverse ."


def test_a_new_contraction_is_spelt_like_those_of_the_response():
    tokenised = edit_of("I ’ m afraid I got fired .", "affirmative_to_negative").incorrect
    plain = edit_of("I'm afraid I got fired .", "affirmative_to_negative").incorrect
    assert tokenised == "I ’ m not afraid I got fired ."
    assert plain == "I'm not afraid I got fired ."
    # no contraction in the response: DailyDialog's more frequent spelling, "didn't"
    assert edit_of("I got fired .", "affirmative_to_negative").incorrect == "I didn't get fired ."
    negated = {edit.incorrect for edit in propose("I got fired . I ’ m sorry .", per_question=10).edits}
    assert "I didn ’ t get fired . I ’ m sorry ." in negated


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        ("", "no_sentence"),
        ("Where do you get them from ?", "wh_question"),
        ("Come in please .", "imperative"),
        ("Try some !", "exclamation"),
        ("Today is June 18 , isn ’ t it ?", "tag_question"),
        ("You think so ?", "declarative_question"),
        ("If you pass the interview , the personnel department will inform you within two weeks .",
         "subordinate_clause"),
        ("Oh , umm , no thanks .", "no_subject_verb"),
        ("We put many signs with English translations for foreign visitors .", "ambiguous_verb"),
        ("Is there anything else ?", "polarity_item"),
        ("Good morning , Mr . Smith .", "abbreviation"),
        ("Now let me sing \" Happy birthday \" for you .", "quotation"),
        ("We're hoping to use even more energy from alternative sources in the future - perhaps even wind power .",
         "multiple_clauses"),
        ("Yes ...", "unclear_ending"),
    ],
)  # fmt: skip
def test_what_the_rule_cannot_edit_safely_is_skipped_with_its_reason(response, reason):
    outcome = propose(response)
    assert outcome.edits == []
    assert outcome.skipped == reason


def test_a_clause_with_a_negative_word_is_not_negated_again():
    subtypes = {edit.subtype for edit in propose("I never bought food from the cafeteria .").edits}
    assert subtypes == {"declarative_to_interrogative"}


def test_a_question_of_the_first_of_two_coordinated_clauses_is_not_made():
    response = "She has a bad cold , and we don't want to take her with us ."
    assert {edit.subtype for edit in propose(response).edits} == {"affirmative_to_negative"}


def test_a_positive_polarity_item_blocks_the_negation():
    assert {edit.subtype for edit in propose("There are some pictures in it .").edits} == {
        "declarative_to_interrogative"
    }


@pytest.mark.parametrize(
    "response",
    [
        "I ’ m fine . Thank you .",
        "Oh , there isn't a menu .",
        "Did you win ?",
        "She went over the edge after her son was killed in an accident .",
        "It ’ s not too difficult to make a good impression .",
    ],
)
def test_the_spans_hold_what_changed_and_nothing_else(response):
    outcome = propose(response)
    assert outcome.edits
    for edit in outcome.edits:
        assert edit.type == PairType.SENTENCE and edit.subtype in SUBTYPES
        assert_spans_cover_the_change(response, edit)
        assert edit.details["sentence"] in response
        assert edit.details["edited"] in edit.incorrect


def test_an_inserted_negation_has_a_small_span():
    edit = edit_of("I'm going to the hospital .", "affirmative_to_negative")
    assert (edit.span, edit.incorrect_span) == ((1, 3), (1, 7))  # "'m" -> "'m not"


RESPONSE_WITH_CHOICES = "I ’ m fine . I got fired . Are you ready for the camping trip ?"


def test_the_same_seed_gives_the_same_edits():
    assert propose(RESPONSE_WITH_CHOICES, seed=3, per_question=2) == propose(
        RESPONSE_WITH_CHOICES, seed=3, per_question=2
    )


def test_the_seed_chooses_among_the_sentences_and_subtypes():
    chosen = {propose(RESPONSE_WITH_CHOICES, seed=seed, per_question=1).edits[0].incorrect for seed in range(30)}
    assert len(chosen) >= 4


def test_per_question_caps_the_edits_and_prefers_different_subtypes():
    assert len(propose(RESPONSE_WITH_CHOICES, per_question=1).edits) == 1
    edits = propose(RESPONSE_WITH_CHOICES, per_question=3).edits
    assert len(edits) == 3
    assert len({edit.subtype for edit in edits}) == 3
    assert len({edit.incorrect for edit in edits}) == 3
    assert len(propose(RESPONSE_WITH_CHOICES, per_question=50).edits) == 5  # 2 + 2 + 1 candidates


def test_a_second_clause_with_a_noun_subject_gets_no_question():
    # "Is my father a teacher and my mother is a worker ?" is no English; the negative of the
    # first clause still is
    outcome = propose("My father is a teacher and my mother is a worker .")
    assert [e.subtype for e in outcome.edits] == ["affirmative_to_negative"]
