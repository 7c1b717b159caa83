import pytest

from core.wordnet import WORDNET_INSTALL_HINT, wordnet_available
from pairs.nouns import NounLexicon


@pytest.fixture(scope="module")
def lexicon():
    if not wordnet_available():
        pytest.skip(f"WordNet is missing: {WORDNET_INSTALL_HINT}")
    return NounLexicon.load()


@pytest.mark.parametrize("word", ["car", "cars", "idea", "dinner", "Room", "people", "children"])
def test_words_used_mostly_as_nouns_are_nouns(lexicon, word):
    assert lexicon.is_noun(word)


@pytest.mark.parametrize("word", ["like", "run", "well", "help", "sure", "running", "guess"])
def test_words_mostly_verbs_adjectives_or_adverbs_are_not_nouns(lexicon, word):
    assert not lexicon.is_noun(word)


@pytest.mark.parametrize("word", ["i", "a", "it", "us", "thing", "lot", "why", "today", "home", "yes", "will"])
def test_function_words_names_and_fixed_phrase_words_are_not_nouns(lexicon, word):
    assert lexicon.noun_share(word) == 0.0


def test_a_proper_name_only_noun_is_not_a_noun(lexicon):
    assert lexicon.noun_share("mary") == 0.0


def test_words_as_often_verbs_are_ambiguous_nouns(lexicon):
    assert lexicon.is_ambiguous_noun("work") and not lexicon.is_noun("work")
    assert not lexicon.is_ambiguous_noun("car")


@pytest.mark.parametrize(
    ("word", "plural"),
    [
        ("cars", True),
        ("men", True),
        ("glasses", True),
        ("people", True),
        ("car", False),
        ("boss", False),
        ("bus", False),
        ("news", False),
    ],
)
def test_number(lexicon, word, plural):
    assert lexicon.is_plural(word) is plural


def test_lemmas_join_the_forms_of_a_noun(lexicon):
    assert lexicon.lemmas("Cars") == {"cars", "car"}
    assert "child" in lexicon.lemmas("children")
    assert lexicon.lemma("children") == "child"


def test_similarity_is_one_for_forms_of_a_noun_and_lower_for_related_nouns(lexicon):
    assert lexicon.similarity("cars", "car") == 1.0
    assert 0 < lexicon.similarity("car", "bus") < 1
    assert lexicon.similarity("car", "bus") > lexicon.similarity("car", "idea")


def test_load_gives_one_lexicon_per_process(lexicon):
    assert NounLexicon.load() is lexicon
