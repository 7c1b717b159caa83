"""The content-word rule on a small hand-made repository, with a table lexicon instead of WordNet."""

import math
import random

import pytest

from pairs.bigram import BigramLM
from pairs.edits import Criterion, PairType
from pairs.rules.content_words import ContentWordRule, indefinite_article

NOUNS = {"car", "bus", "dog", "cake", "hat", "pen", "egg", "apple", "tom", "book", "table"}


class TableLexicon:
    """The nouns above; a plural is a listed noun plus "s"; ``close`` pairs are near-synonyms."""

    def __init__(self, close=()):
        self.close = {frozenset(pair) for pair in close}

    def version(self):
        return "table"

    def is_plural(self, word):
        word = word.lower()
        return word.endswith("s") and word[:-1] in NOUNS

    def is_noun(self, word):
        return word.lower() in NOUNS or self.is_plural(word)

    def is_ambiguous_noun(self, word):
        return False

    def lemmas(self, word):
        word = word.lower()
        return frozenset({word, word[:-1]}) if self.is_plural(word) else frozenset({word})

    def similarity(self, a, b):
        if self.lemmas(a) & self.lemmas(b):
            return 1.0
        return 0.9 if frozenset((a.lower(), b.lower())) in self.close else 0.0


REPOSITORY = (
    ["the car ."] * 2
    + ["the car is red"] * 2
    + ["the bus ."]
    + ["a bus stops ."] * 3
    + ["the dog ."]
    + ["the dog runs ."] * 4
    + ["the cake ."] * 4
    + ["the hat ."] * 2
    + ["the hat is old"] * 2
    + ["a hat ."]
    + ["my pen ."]  # once: not in V
    + ["the hats are old"] * 2
    + ["the dogs are old", "the dogs run"]
    + ["an egg .", "an egg", "an apple", "an apple ."]
    + ["I met Tom .", "ask Tom", "Tom is here"]  # a name, capitalised inside sentences
)


@pytest.fixture(scope="module")
def lm():
    return BigramLM.fit(REPOSITORY)


@pytest.fixture(scope="module")
def rule(lm):
    return ContentWordRule(lm, TableLexicon())


def propose(rule, response, *, context=("Hello .",), seed=0, per_question=1):
    return rule.propose(context=list(context), response=response, rng=random.Random(seed), per_question=per_question)


def replacement(outcome, criterion):
    return [edit.details["replacement"] for edit in outcome.edits if edit.criterion == criterion]


def test_vocabulary_holds_nouns_seen_at_least_twice_and_no_names(rule):
    # "pen" once; "tom" capitalised inside sentences; "book" and "table" never seen
    assert sorted(rule.vocabulary) == ["apple", "bus", "cake", "car", "dog", "dogs", "egg", "hat", "hats"]


def test_equally_likely_is_the_hand_computed_argmin(lm, rule):
    # w_{i-1} = "the", w_i = "car", w_{i+1} = "."; the singular nouns of V that are not "car".
    p = lm.prob
    candidates = ["bus", "dog", "cake", "hat"]
    el = {
        v: math.log(p(v, "the") / p("car", "the")) ** 2 + math.log(p(".", v) / p(".", "car")) ** 2 for v in candidates
    }
    # P(v|the): bus .020, dog .198, cake .152, hat .157 (P(car|the) .152)
    # P(.|v):   bus .140, dog .112, cake .851, hat .512 (P(.|car) .390)
    # EL: bus 5.11, dog 1.62, cake 0.61, hat 0.07 -> hat. Reading P(v|.) for P(.|v) would give cake,
    # the first term alone cake, the argmax bus.
    assert min(el, key=el.get) == "hat"
    assert el["hat"] < 0.1 < el["cake"] < el["dog"] < el["bus"]
    outcome = propose(rule, "I like the car .")
    assert replacement(outcome, Criterion.EQUALLY_LIKELY) == ["hat"]
    edit = next(e for e in outcome.edits if e.criterion == Criterion.EQUALLY_LIKELY)
    assert edit.details["score"] == pytest.approx(el["hat"])


def test_most_likely_is_the_hand_computed_argmax(lm, rule):
    p = lm.prob
    candidates = ["bus", "dog", "cake", "hat"]
    ml = {v: math.log(p(v, "the")) + math.log(p(".", v)) for v in candidates}
    # ML: bus -5.86, dog -3.81, cake -2.04, hat -2.52 -> cake. log P(v|the) alone would give dog,
    # P(v|.) for P(.|v) hat, the argmin bus.
    assert max(ml, key=ml.get) == "cake"
    assert ml["cake"] > ml["hat"] > ml["dog"] > ml["bus"]
    outcome = propose(rule, "I like the car .")
    assert replacement(outcome, Criterion.MOST_LIKELY) == ["cake"]
    edit = next(e for e in outcome.edits if e.criterion == Criterion.MOST_LIKELY)
    assert edit.details["score"] == pytest.approx(ml["cake"])


def test_edit_carries_the_span_the_words_around_and_the_model(lm, rule):
    response = "I like the car ."
    edit = next(e for e in propose(rule, response).edits if e.criterion == Criterion.MOST_LIKELY)
    assert edit.type == PairType.CONTENT
    assert edit.subtype == "noun"
    assert edit.span == (11, 14)
    assert edit.incorrect == "I like the cake ."
    assert edit.incorrect_span == (11, 15)
    assert {k: edit.details[k] for k in ("word", "replacement", "previous", "next", "lm")} == {
        "word": "car",
        "replacement": "cake",
        "previous": "the",
        "next": ".",
        "lm": lm.digest()[:12],
    }


def test_response_boundaries_are_the_sentence_tokens(lm, rule):
    edit = propose(rule, "car").edits[0]
    assert (edit.details["previous"], edit.details["next"]) == ("<s>", "</s>")


def test_a_noun_seen_once_is_not_a_replacement_unless_min_count_allows_it(lm):
    assert "pen" not in ContentWordRule(lm, TableLexicon()).vocabulary
    assert "pen" in ContentWordRule(lm, TableLexicon(), min_count=1).vocabulary


def test_context_words_and_their_forms_are_not_replacements(rule):
    outcome = propose(rule, "I like the car .", context=["The hats and a cake ."])
    chosen = {e.details["replacement"] for e in outcome.edits}
    assert chosen and not chosen & {"hat", "hats", "cake"}


def test_words_of_the_response_are_not_replacements(rule):
    outcome = propose(rule, "I like the car and the cake .", context=["I like cars ."])
    assert all(e.details["word"] == "car" for e in outcome.edits)
    assert "cake" not in {e.details["replacement"] for e in outcome.edits}


def test_the_noun_with_its_lemma_in_the_context_is_replaced(rule):
    for seed in range(10):
        outcome = propose(rule, "the dog and the car", context=["Whose cars are these ?"], seed=seed)
        assert {e.details["word"] for e in outcome.edits} == {"car"}


def test_equally_associated_nouns_are_chosen_by_the_rng_deterministically(rule):
    words = {propose(rule, "the dog and the car", seed=seed).edits[0].details["word"] for seed in range(20)}
    assert words == {"dog", "car"}
    assert propose(rule, "the dog and the car", seed=3) == propose(rule, "the dog and the car", seed=3)


def test_a_plural_noun_is_replaced_by_a_plural(rule):
    outcome = propose(rule, "I like the dogs .")
    assert {e.subtype for e in outcome.edits} == {"noun_plural"}
    assert {e.details["replacement"] for e in outcome.edits} <= {"hats"}


def test_the_article_agrees_with_the_replacement(rule):
    after_an = {e.details["replacement"] for e in propose(rule, "I ate an egg .").edits}
    after_a = {e.details["replacement"] for e in propose(rule, "I saw a car .").edits}
    assert after_an == {"apple"}
    assert after_a and all(indefinite_article(word) == "a" for word in after_a)


def test_indefinite_article_by_spelling():
    assert [indefinite_article(w) for w in ("apple", "car", "hour", "university", "egg")] == [
        "an",
        "a",
        "an",
        "a",
        "an",
    ]


def test_capitalisation_of_the_noun_is_kept(rule):
    edit = next(e for e in propose(rule, "Car is red .").edits if e.criterion == Criterion.MOST_LIKELY)
    new = edit.details["replacement"]
    assert new[0].isupper() and new.lower() in rule.vocabulary
    assert edit.incorrect == new + " is red ."
    assert propose(rule, "CAR !").edits[0].details["replacement"].isupper()


@pytest.mark.parametrize("response", ["I don ’ t like the car .", "I don't like the car.", "I don't like the car"])
def test_only_the_noun_changes_in_either_spelling(rule, response):
    start = response.index("car")
    for edit in propose(rule, response).edits:
        new = edit.details["replacement"]
        assert edit.span == (start, start + 3)
        assert edit.incorrect == response[:start] + new + response[start + 3 :]
        assert edit.incorrect[slice(*edit.incorrect_span)] == new


def test_the_tokenised_spelling_gives_the_same_words_around_the_noun(rule):
    plain = propose(rule, "I don't like the car.").edits
    tokenised = propose(rule, "I don ’ t like the car .").edits
    assert [e.details["replacement"] for e in plain] == [e.details["replacement"] for e in tokenised]


def test_names_and_verbs_are_not_nouns(rule):
    assert propose(rule, "I met Tom .").skipped == "no_noun"
    assert propose(rule, "Tom ?").skipped == "no_noun"  # capitalised inside sentences in the repository
    assert propose(rule, "I book a table .").edits[0].details["word"] == "table"


def test_a_word_after_an_inverted_subject_pronoun_is_a_verb(rule):
    # "will it cost": "it" after an auxiliary is the subject, so "book" is a verb ("will it book")
    assert propose(rule, "Will it book ?").skipped == "no_noun"
    # elsewhere "it" may be an object before a noun ("give it time"): the noun is still edited
    assert propose(rule, "I gave it cake .").edits[0].details["word"] == "cake"


def test_no_noun_is_a_skip(rule):
    outcome = propose(rule, "Yes , I do .")
    assert (outcome.edits, outcome.skipped) == ([], "no_noun")


def test_no_replacement_left_is_a_skip(rule):
    outcome = propose(rule, "the car .", context=["bus dog cake hat egg apple"])
    assert (outcome.edits, outcome.skipped) == ([], "no_replacement")


def test_per_question_gives_the_best_k_per_criterion(rule):
    outcome = propose(rule, "I like the car .", per_question=2)
    el = replacement(outcome, Criterion.EQUALLY_LIKELY)
    ml = replacement(outcome, Criterion.MOST_LIKELY)
    assert el == ["hat", "cake"]  # EL 0.07, then 0.61 (see the hand computation)
    assert ml == ["cake", "hat"]


def test_a_replacement_close_in_meaning_to_the_noun_is_passed_over(lm):
    rule = ContentWordRule(lm, TableLexicon(close=[("car", "hat")]))
    outcome = propose(rule, "I like the car .")
    assert replacement(outcome, Criterion.EQUALLY_LIKELY) == ["cake"]  # hat (EL 0.07) is too close
    assert replacement(outcome, Criterion.MOST_LIKELY) == ["cake"]


def test_only_the_chosen_criteria_are_proposed(lm):
    only_ml = ContentWordRule(lm, TableLexicon(), criteria=["ml"])
    assert {e.criterion for e in propose(only_ml, "I like the car .").edits} == {"ml"}
    with pytest.raises(ValueError):
        ContentWordRule(lm, TableLexicon(), criteria=["best"])
    with pytest.raises(ValueError):
        ContentWordRule(lm, TableLexicon(), criteria=[])


def test_version_names_the_model(lm, rule):
    assert lm.digest()[:12] in rule.version()
