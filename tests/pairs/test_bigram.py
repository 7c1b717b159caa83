import math

import numpy as np
import pytest

import pairs.bigram
from pairs.bigram import BigramLM

# <s> the car . </s> | <s> the bus . </s> | <s> a car </s>
TINY = ["the car .", "The bus .", "a car"]
D = 0.75
# Bigram types: (<s> the) x2, (<s> a), (the car), (the bus), (car .), (car </s>), (bus .), (. </s>) x2, (a car):
# 9 types; N1+(. w): the 1, a 1, car 2, bus 1, "." 2, </s> 2, <unk> 0; 6 words with one or more.
# The predicted vocabulary: ".", a, bus, car, the, </s>, <unk> = 7 entries.
UNIFORM = D * 6 / 9 / 7  # the uniform share of the lower order


def low(predecessors: int) -> float:
    return max(predecessors - D, 0) / 9 + UNIFORM


@pytest.fixture
def tiny():
    return BigramLM.fit(TINY, discount=D)


def test_lower_order_is_the_kneser_ney_continuation_with_a_uniform_floor(tiny):
    # After an unseen history the model is the lower order alone.
    assert tiny.prob("car", "zebra") == pytest.approx(1.25 / 9 + 1 / 14)
    assert tiny.prob("bus", "zebra") == pytest.approx(0.25 / 9 + 1 / 14)
    assert tiny.prob("zebra", "zebra") == pytest.approx(1 / 14)


def test_higher_order_discounts_the_bigram_and_interpolates_by_the_followers(tiny):
    # c(the) = 2, c(the car) = 1, N1+(the .) = 2
    assert tiny.prob("car", "the") == pytest.approx((1 - D) / 2 + D * 2 / 2 * low(2))
    # c(a) = 1, c(a car) = 1, N1+(a .) = 1; "bus" never follows "a"
    assert tiny.prob("car", "a") == pytest.approx((1 - D) / 1 + D * 1 / 1 * low(2))
    assert tiny.prob("bus", "a") == pytest.approx(D * low(1))
    # c(<s>) = 3: two "the" (one capitalised, lower-cased), one "a"
    assert tiny.prob("the", "<s>") == pytest.approx((2 - D) / 3 + D * 2 / 3 * low(1))
    assert tiny.log_prob("the", "<s>") == pytest.approx(math.log(tiny.prob("the", "<s>")))


@pytest.mark.parametrize("history", ["<s>", "the", "car", ".", "a", "unseen"])
def test_a_row_sums_to_one_over_the_vocabulary_and_the_end(tiny, history):
    predicted = np.arange(1, len(tiny))  # all but <s>
    row = tiny.prob_next_many(history, predicted)
    assert row.sum() == pytest.approx(1.0)
    assert (row > 0).all()


def test_the_start_token_is_never_predicted(tiny):
    assert tiny.prob("<s>", "the") == 0.0


def test_vectorised_rows_and_columns_agree_with_single_lookups(tiny):
    ids = np.arange(len(tiny))
    words = tiny.vocabulary
    row = tiny.prob_next_many("the", ids)
    column = tiny.prob_many_given(".", ids)
    assert row == pytest.approx([tiny.prob(word, "the") for word in words])
    assert column == pytest.approx([tiny.prob(".", word) for word in words])


def test_tokens_are_lower_cased_with_punctuation_and_boundaries(tiny):
    assert tiny.count("car") == 2
    assert tiny.count("Car") == 2
    assert tiny.count(".") == 2
    assert tiny.count("</s>") == 3
    assert tiny.count("<s>") == 3
    assert tiny.count("zebra") == 0
    assert tiny.id("zebra") == tiny.id("<unk>")


def test_typographic_apostrophes_count_as_plain_ones():
    lm = BigramLM.fit(["I don ’ t know .", "I don't know ."])
    assert lm.count("'") == 1
    assert lm.count("don't") == 1
    assert lm.prob("'", "don") > lm.prob("know", "don")


def test_capitalised_share_counts_only_inside_sentences():
    lm = BigramLM.fit(["Tom is here .", "I met Tom . Bill left .", "call tom", "the bill please"])
    assert lm.capitalised_share("tom") == pytest.approx(1 / 2)  # "met Tom", "call tom"; the first starts
    assert lm.capitalised_share("bill") == 0.0  # "Bill" after "." starts a sentence
    assert lm.capitalised_share("zebra") == 0.0


def test_empty_utterances_are_skipped():
    assert BigramLM.fit(["", "  ", *TINY]).digest() == BigramLM.fit(TINY).digest()


def test_digest_depends_on_the_counts_not_on_the_order_of_the_texts(tiny):
    assert BigramLM.fit(list(reversed(TINY)), discount=D).digest() == tiny.digest()
    assert BigramLM.fit([*TINY, "the car ."], discount=D).digest() != tiny.digest()
    assert BigramLM.fit(TINY, discount=0.5).digest() != tiny.digest()


def test_counting_in_chunks_gives_the_same_model(monkeypatch, tiny):
    monkeypatch.setattr(pairs.bigram, "_CHUNK_PAIRS", 2)
    assert BigramLM.fit(TINY, discount=D).digest() == tiny.digest()


def test_save_and_load_round_trip(tiny, tmp_path):
    path = tmp_path / "lm.npz"
    tiny.save(path)
    loaded = BigramLM.load(path)
    assert loaded.digest() == tiny.digest()
    assert loaded.vocabulary == tiny.vocabulary
    assert loaded.prob("car", "the") == tiny.prob("car", "the")
    assert loaded.capitalised_share("the") == tiny.capitalised_share("the")


def test_discount_outside_zero_one_is_refused():
    with pytest.raises(ValueError):
        BigramLM.fit(TINY, discount=1.0)
