import math

import pytest

from core.wordnet import WORDNET_INSTALL_HINT, WordNetMissing, load_wordnet, wordnet_available
from evaluation.metrics import reference
from evaluation.metrics.reference import (
    corpus_bleu,
    meteor,
    rouge_l,
    sentence_bleu,
    system_scores,
    tokenize,
)


@pytest.fixture(scope="module")
def wordnet():
    if not wordnet_available():
        pytest.skip(f"WordNet is missing: {WORDNET_INSTALL_HINT}")
    return load_wordnet()


def test_tokenize_lowercases_and_splits_on_whitespace():
    assert tokenize("Say , Jim  How ?") == ["say", ",", "jim", "how", "?"]


def test_bleu1_of_a_hand_example():
    # given 5 of the 6 hypothesis unigrams in the reference ("sat" is not), same lengths: no brevity penalty
    pairs = [("the cat sat on the mat", ["the cat is on the mat"])]
    # then BLEU-1 is the clipped unigram precision
    assert corpus_bleu(pairs, 1) == pytest.approx(5 / 6)


def test_bleu2_is_the_geometric_mean_of_unigram_and_bigram_precision():
    # bigrams "the cat", "on the", "the mat" of 5 match
    pairs = [("the cat sat on the mat", ["the cat is on the mat"])]
    assert corpus_bleu(pairs, 2) == pytest.approx(math.sqrt(5 / 6 * 3 / 5))


def test_bleu_brevity_penalty_for_a_short_hypothesis():
    pairs = [("the cat", ["the cat sat on the mat"])]
    assert corpus_bleu(pairs, 1) == pytest.approx(math.exp(1 - 6 / 2))


def test_corpus_bleu_pools_counts_over_responses():
    # given one perfect 2-word response and one 4-word response with no match, total lengths equal
    pairs = [("a b", ["a b"]), ("c d e f", ["w x y z"])]
    # then corpus BLEU-1 is 2 matches of 6 words, not the mean of 1 and 0
    assert corpus_bleu(pairs, 1) == pytest.approx(2 / 6)


def test_bleu_is_case_insensitive():
    assert corpus_bleu([("The Cat", ["the cat"])], 2) == pytest.approx(1.0)


def test_bleu_clips_against_the_best_reference():
    # given "cat" only in the second reference
    pairs = [("the cat", ["the dog", "a cat"])]
    assert corpus_bleu(pairs, 1) == pytest.approx(1.0)


def test_sentence_bleu2_smooths_a_zero_bigram_count_with_epsilon():
    # given unigrams all matching and no bigram match: method 1 counts 0.1 of 1 bigram
    assert sentence_bleu("the cat", ["cat the"], 2) == pytest.approx(math.sqrt(1.0 * 0.1))


def test_corpus_bleu2_without_any_bigram_match_is_zero():
    # nltk gives a tiny positive number (about 1e-154) rather than 0
    assert corpus_bleu([("the cat", ["cat the"])], 2) == pytest.approx(0.0, abs=1e-100)


def test_rouge_l_f_of_a_hand_example():
    # LCS "the cat" = 2: P = 2/3, R = 2/4, F = 2PR / (P + R) = 4/7
    assert rouge_l("the cat sat", "the cat was sitting") == pytest.approx(4 / 7)


def test_rouge_l_ignores_punctuation_and_takes_the_best_reference():
    assert rouge_l("ok , thanks !", ["no way", "OK thanks"]) == pytest.approx(1.0)


def test_meteor_of_an_identical_response_is_one_less_the_fragmentation_penalty(wordnet):
    # one chunk of 6 matches: penalty 0.5 * (1/6)^3
    assert meteor("the cat sat on the mat", "the cat sat on the mat", wordnet=wordnet) == pytest.approx(
        1 - 0.5 / 216, abs=1e-3
    )


def test_meteor_matches_wordnet_synonyms(wordnet):
    # given "couch" and "sofa", one WordNet synset (sofa.n.01), against an unrelated word
    synonym = meteor("a big couch", "a big sofa", wordnet=wordnet)
    unrelated = meteor("a big table", "a big sofa", wordnet=wordnet)
    assert synonym > 0.9 > unrelated


def test_local_wordnet_reads_debian_files(wordnet):
    assert wordnet.get_version() == "3.0"
    assert wordnet.synset("dog.n.01").lexname() == "noun.animal"


def test_missing_wordnet_names_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("WELLCHOSEN_WORDNET_DIR", str(tmp_path))
    with pytest.raises(WordNetMissing, match="apt-get install wordnet-base"):
        load_wordnet()


def test_system_scores_rank_a_system_that_copies_references_first(wordnet):
    # given two systems answering the same contexts, one with the references themselves
    refs = ["i would like a cup of tea .", "the train leaves at six ."]
    pairs = {
        "copy": [(r, [r]) for r in refs],
        "generic": [("i do n't know .", [r]) for r in refs],
    }
    scores = system_scores(pairs, wordnet=wordnet)
    assert set(scores["copy"]) == {"BLEU-1", "BLEU-2", "METEOR", "ROUGE-L"}
    assert all(scores["copy"][m] > scores["generic"][m] for m in scores["copy"])


def test_system_scores_without_meteor_need_no_wordnet(monkeypatch, tmp_path):
    monkeypatch.setenv("WELLCHOSEN_WORDNET_DIR", str(tmp_path))
    scores = system_scores({"s": [("a b", ["a b"])]}, metrics=["BLEU-1", "ROUGE-L"])
    assert scores == {"s": {"BLEU-1": pytest.approx(1.0), "ROUGE-L": pytest.approx(1.0)}}


def test_system_scores_reject_an_unknown_metric():
    with pytest.raises(ValueError, match="unknown metrics"):
        system_scores({"s": [("a", ["a"])]}, metrics=["CIDEr"])


def test_a_hypothesis_needs_a_reference():
    with pytest.raises(ValueError, match="at least one reference"):
        reference.rouge_l("a", [])


def test_sentence_level_system_bleu_is_the_mean_of_sentence_scores():
    pairs = [("a b", ["a b"]), ("c d e f", ["w x y z"])]
    scores = system_scores({"s": pairs}, metrics=["BLEU-1"], bleu="sentence")
    expected = (sentence_bleu("a b", ["a b"], 1) + sentence_bleu("c d e f", ["w x y z"], 1)) / 2
    assert scores["s"]["BLEU-1"] == pytest.approx(expected)
    assert expected != pytest.approx(corpus_bleu(pairs, 1))
