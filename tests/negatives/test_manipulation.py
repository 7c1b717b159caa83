"""The manipulation itself (Park et al. 2021): scoring one word at a time, selection, replacement."""

import math

import numpy as np
import pytest
import torch

from negatives.manipulation import Item, ManipulationSettings, Manipulator, context_text, spaced
from negatives.mlm import MaskedLM

CONTEXT = ["Did you book the tickets?", "Not yet, the site was down all morning.", "Can you try again tonight?"]
RESPONSE = "Sure, I will try again after dinner."
NEVER = -1e9  # a threshold every word passes


@pytest.fixture(scope="module")
def mlm(tiny_mlm_dir) -> MaskedLM:
    return MaskedLM.load(tiny_mlm_dir, setting="--mlm")


def manipulate(mlm, *items, **settings):
    return Manipulator(mlm, ManipulationSettings(**settings)).manipulate(list(items))


def recorded_sequences(mlm, monkeypatch) -> list:
    calls = []
    original = mlm.log_probs

    def spy(sequences, **kw):
        calls.append(list(sequences))
        return original(sequences, **kw)

    monkeypatch.setattr(mlm, "log_probs", spy)
    return calls


def direct_log_prob(mlm, text_pair, word_text) -> float:
    """log P(word | input with that word masked), by one plain model call on an unpadded input."""
    tok = mlm.tokenizer
    enc = tok(*text_pair, return_tensors="pt")
    side = len(text_pair) - 1
    seq = enc.sequence_ids()
    words = enc.word_ids()
    ids = enc["input_ids"][0].clone()
    pieces = [
        k
        for k in range(len(ids))
        if seq[k] == side
        and tok.decode([ids[k]]).replace("##", "")
        and words[k] == _word_index(tok, text_pair[-1], word_text)
    ]
    targets = ids[pieces].clone()
    ids[pieces] = tok.mask_token_id
    with torch.inference_mode():
        logits = mlm.model(
            input_ids=ids[None], token_type_ids=enc["token_type_ids"], attention_mask=enc["attention_mask"]
        ).logits[0]
    logp = torch.log_softmax(logits.float(), -1)
    return float(sum(logp[p, t] for p, t in zip(pieces, targets, strict=True)))


def _word_index(tok, text, word_text) -> int:
    enc = tok(text, return_offsets_mapping=True)
    for k, (start, end) in enumerate(enc["offset_mapping"]):
        if (
            enc.sequence_ids()[k] == 0
            and text[start:end] == word_text[: end - start]
            and start == text.index(word_text)
        ):
            return enc.word_ids()[k]
    raise AssertionError(word_text)


def test_each_word_is_scored_with_only_its_own_pieces_masked(mlm, monkeypatch):
    calls = recorded_sequences(mlm, monkeypatch)
    [result] = manipulate(mlm, Item(1, CONTEXT, RESPONSE))
    scoring = calls[0]
    # two variants (with and without the context) per word, each masking that word alone
    assert len(scoring) == 2 * len(result.words)
    alone = mlm.tokenizer(RESPONSE)["input_ids"]
    for word_number in range(len(result.words)):
        without_context = scoring[2 * word_number + 1]
        changed = [k for k, (a, b) in enumerate(zip(alone, without_context.input_ids, strict=True)) if a != b]
        assert changed == without_context.positions
        assert all(without_context.input_ids[k] == mlm.mask_id for k in changed)
    # every word's masks are restored before the next one: no variant holds an earlier word's mask
    masks = [sum(i == mlm.mask_id for i in s.input_ids) for s in scoring]
    assert masks == [len(s.positions) for s in scoring]


def test_a_words_score_is_its_log_probability_with_context_minus_without(mlm):
    [result] = manipulate(mlm, Item(1, CONTEXT, RESPONSE))
    word = next(w for w in result.words if w.text == "dinner")
    with_context = direct_log_prob(mlm, (context_text(CONTEXT), RESPONSE), "dinner")
    alone = direct_log_prob(mlm, (RESPONSE,), "dinner")
    assert word.logp_context == pytest.approx(with_context, abs=1e-4)
    assert word.logp_alone == pytest.approx(alone, abs=1e-4)
    assert word.score == pytest.approx(with_context - alone, abs=1e-4)


def test_a_word_of_several_pieces_is_masked_whole_and_scored_by_the_sum_of_its_pieces(mlm, monkeypatch):
    response = "Sure, the coffeehouse is after dinner."
    pieces = mlm.tokenizer.tokenize("coffeehouse")
    assert len(pieces) > 1
    calls = recorded_sequences(mlm, monkeypatch)
    [result] = manipulate(mlm, Item(1, CONTEXT, response))
    word = next(w for w in result.words if w.text == "coffeehouse")
    variant = calls[0][2 * word.index + 1]
    assert len(variant.positions) == len(pieces)
    assert word.logp_alone == pytest.approx(direct_log_prob(mlm, (response,), "coffeehouse"), abs=1e-4)


def test_the_words_scoring_above_the_threshold_are_selected(mlm):
    [scored] = manipulate(mlm, Item(1, CONTEXT, RESPONSE), threshold=NEVER, punctuation=True)
    scores = sorted(w.score for w in scored.words)
    threshold = (scores[len(scores) // 2] + scores[len(scores) // 2 - 1]) / 2
    [result] = manipulate(mlm, Item(1, CONTEXT, RESPONSE), threshold=threshold, punctuation=True)
    assert result.selected == [w.index for w in result.words if w.score > threshold]
    assert 0 < len(result.selected) < len(result.words)


def test_no_selected_word_means_no_negative_and_an_outcome_saying_so(mlm):
    [result] = manipulate(mlm, Item(1, CONTEXT, RESPONSE), threshold=1e9)
    assert result.outcome == "no_word_selected"
    assert result.negatives == [] and result.words


def test_a_response_of_fewer_than_three_words_is_skipped(mlm):
    [short, long_enough] = manipulate(mlm, Item(1, CONTEXT, "Sure thing"), Item(2, CONTEXT, "Sure thing ."))
    assert short.outcome == "too_short" and short.negatives == []
    assert long_enough.outcome != "too_short"


def test_the_original_word_never_comes_back(mlm):
    items = [
        Item(k, CONTEXT, text) for k, text in enumerate(["How much is this jacket?", RESPONSE, "My sister is coming."])
    ]
    for result in manipulate(mlm, *items, threshold=NEVER, per_question=3, punctuation=True):
        assert len(result.negatives) == 3
        for negative in result.negatives:
            assert len(negative.replacements) == len(result.words)
            for replacement in negative.replacements:
                assert replacement["replacement"].lower() != replacement["original"].lower()


def test_the_first_negative_takes_the_best_prediction_without_context_or_the_second_where_the_best_is_the_original(
    mlm, monkeypatch
):
    calls = recorded_sequences(mlm, monkeypatch)
    [result] = manipulate(mlm, Item(1, CONTEXT, RESPONSE), threshold=NEVER, punctuation=True)
    replacement = calls[1][0]
    assert mlm.tokenizer.sep_token_id not in replacement.input_ids[1:-1]  # the context is not in it
    logp = mlm.log_probs([replacement])[0].numpy()
    original = mlm.tokenizer(RESPONSE, add_special_tokens=False)["input_ids"]
    banned = set(mlm.tokenizer.all_special_ids)
    expected = []
    for row, original_id in zip(logp, original, strict=True):
        ranked = [
            int(i)
            for i in np.argsort(-row)
            if int(i) not in banned and not mlm.tokenizer.convert_ids_to_tokens(int(i)).startswith("##")
        ]
        expected.append(ranked[1] if ranked[0] == original_id else ranked[0])
    assert all(len(mlm.tokenizer.tokenize(w.text)) == 1 for w in result.words)
    chosen = [r["replacement"] for r in result.negatives[0].replacements]
    assert chosen == [
        mlm.tokenizer.convert_tokens_to_string([t]) for t in mlm.tokenizer.convert_ids_to_tokens(expected)
    ]


@pytest.mark.parametrize(
    ("start", "end", "replacement", "expected"),
    [
        (4, 5, "well", "Sure well I will."),  # a comma glued to "Sure" becomes a word: a space
        (0, 4, "No", "No, I will."),  # a word before punctuation: nothing added
        (12, 13, "!", "Sure, I will!"),  # punctuation for punctuation: nothing added
    ],
)
def test_a_replacement_glued_to_a_word_is_spaced_and_the_rest_of_the_text_kept(start, end, replacement, expected):
    text = "Sure, I will."
    assert text[:start] + spaced(text, start, end, replacement) + text[end:] == expected


def test_replacement_sees_the_context_only_in_the_ablation(mlm, monkeypatch):
    calls = recorded_sequences(mlm, monkeypatch)
    manipulate(mlm, Item(1, CONTEXT, RESPONSE), threshold=NEVER, replace_with_context=True)
    context_ids = mlm.tokenizer(context_text(CONTEXT), add_special_tokens=False)["input_ids"]
    replacement = calls[1][0].input_ids
    assert replacement[1 : 1 + len(context_ids)] == context_ids


def test_a_maximum_share_keeps_the_highest_scoring_words(mlm):
    [every] = manipulate(mlm, Item(1, CONTEXT, RESPONSE), threshold=NEVER)
    [capped] = manipulate(mlm, Item(1, CONTEXT, RESPONSE), threshold=NEVER, max_mask_share=0.3)
    limit = math.floor(0.3 * len(every.words))
    best = sorted(sorted(every.words, key=lambda w: -w.score)[:limit], key=lambda w: w.index)
    assert capped.selected == [w.index for w in best]


def test_the_same_seed_gives_the_same_negatives_and_another_seed_other_samples(mlm):
    item = Item(7, CONTEXT, RESPONSE)
    first = manipulate(mlm, item, threshold=NEVER, per_question=4, seed=3)[0].negatives
    again = manipulate(mlm, item, threshold=NEVER, per_question=4, seed=3)[0].negatives
    other = manipulate(mlm, item, threshold=NEVER, per_question=4, seed=4)[0].negatives
    assert [n.text for n in first] == [n.text for n in again]
    assert len({n.text for n in first}) == 4
    assert first[0].text == other[0].text  # the argmax negative does not depend on the seed
    assert [n.text for n in first[1:]] != [n.text for n in other[1:]]


def test_a_batch_gives_what_each_response_gives_alone(mlm):
    items = [
        Item(k, CONTEXT[: k % 3 + 1], text)
        for k, text in enumerate(
            [
                "How much is this jacket?",
                RESPONSE,
                "It is forty dollars, but it is on sale today.",
                "Let's meet at noon.",
            ]
        )
    ]
    together = manipulate(mlm, *items, threshold=0.0, per_question=2, batch_tokens=64)
    for item, result in zip(items, together, strict=True):
        [alone] = manipulate(mlm, item, threshold=0.0, per_question=2)
        assert [w.score for w in result.words] == pytest.approx([w.score for w in alone.words], abs=1e-4)
        assert [n.text for n in result.negatives] == [n.text for n in alone.negatives]


def test_each_turn_of_a_dialogue_is_paired_with_up_to_three_turns_before_it():
    from negatives.manipulation import dialogue_pairs

    assert list(dialogue_pairs(["A.", "B.", " ", "C.", "D."])) == [
        ("", "A."),
        ("A.", "B."),
        ("A. B.", " "),
        ("A. B.", "C."),  # a blank turn counts among the three and adds nothing
        ("B. C.", "D."),
    ]


def test_punctuation_is_neither_replaced_nor_a_replacement_by_default(mlm):
    items = [
        Item(k, CONTEXT, text) for k, text in enumerate(["Yes , you did .", RESPONSE, "Well ... maybe, maybe not!"])
    ]
    for result in manipulate(mlm, *items, threshold=NEVER, per_question=3):
        words = {w.index: w.text for w in result.words}
        assert result.selected and all(any(c.isalnum() for c in words[i]) for i in result.selected)
        for negative in result.negatives:
            assert all(any(c.isalnum() for c in r["replacement"]) for r in negative.replacements)


def test_the_paper_setting_replaces_punctuation_too(mlm):
    [result] = manipulate(mlm, Item(1, CONTEXT, "Yes , you did ."), threshold=NEVER, punctuation=True)
    assert {w.text for w in result.words if w.index in result.selected} >= {",", "."}


def test_a_setup_from_before_the_punctuation_option_is_the_paper_setting():
    # the digest of a run made before the option (punctuation replaced) stays that run's
    assert "punctuation" not in ManipulationSettings(punctuation=True).describe()
    assert ManipulationSettings().describe()["punctuation"] is False


def test_no_replacement_is_sub_word_debris(mlm, monkeypatch):
    # given a model that puts its mass on continuation pieces ("##xx") and pieces without a letter
    vocab = mlm.tokenizer.get_vocab()
    debris = [i for t, i in vocab.items() if t.startswith("##") or not any(c.isalnum() for c in t)]
    original = mlm.log_probs

    def skewed(sequences, **kw):
        rows = [row.clone() for row in original(sequences, **kw)]
        for row in rows:
            row[:, debris] += 100.0
        return rows

    monkeypatch.setattr(mlm, "log_probs", skewed)
    items = [Item(k, CONTEXT, text) for k, text in enumerate([RESPONSE, "The coffeehouse opens at nine."])]
    results = manipulate(mlm, *items, threshold=NEVER, per_question=3)
    # then every replacement is a word: no leading "##", no piece without a letter or digit
    replacements = [r["replacement"] for res in results for n in res.negatives for r in n.replacements]
    assert replacements
    assert all(not r.startswith("##") and any(c.isalnum() for c in r) for r in replacements)
    assert all(all(c.isalnum() for c in r.replace("'", "")) for r in replacements)


def test_placeholders_of_the_vocabulary_are_never_replacements(mlm):
    from negatives.manipulation import _placeholder

    assert _placeholder("[unused12]") and _placeholder("<mask>") and not _placeholder("[") and not _placeholder("word")
    manipulator = Manipulator(mlm, ManipulationSettings())
    for token, index in mlm.tokenizer.get_vocab().items():
        if _placeholder(token):
            assert not manipulator._allowed_start[index] and not manipulator._allowed_inside[index]


def test_the_paper_setting_scores_each_token_with_the_previous_turn_as_one_segment(mlm, monkeypatch):
    calls = recorded_sequences(mlm, monkeypatch)
    item = Item(1, CONTEXT, "The coffeehouse opens at nine.")
    [result] = manipulate(mlm, item, threshold=NEVER, paper=True, punctuation=True)
    tokens = mlm.tokenizer(item.response, add_special_tokens=False)["input_ids"]
    # every WordPiece token is a unit of its own, scored and replaced
    assert len(result.words) == len(tokens) == result.tokens
    assert result.selected == list(range(len(tokens)))
    # the input with the context is one segment holding only the previous turn
    last = mlm.tokenizer(CONTEXT[-1], add_special_tokens=False)["input_ids"]
    with_context = calls[0][0]
    assert with_context.input_ids[1 : 1 + len(last)] == last
    assert with_context.input_ids[1 + len(last) : 1 + len(last) + len(tokens)][1:] == tokens[1:]
    assert set(with_context.token_type_ids) == {0}
    # and the negative is a text (pieces of one word glued), with each token changed
    [negative] = result.negatives
    assert negative.text != item.response and "##" not in negative.text


def test_the_paper_setting_selects_a_score_equal_to_the_threshold(mlm, monkeypatch):
    from negatives.manipulation import WordScore

    def score(self, encoded):
        return [[WordScore(w.index, w.text, 0.5, 0.0, 0.0) for w in enc.words] for enc in encoded]

    monkeypatch.setattr(Manipulator, "score", score)
    item = Item(1, CONTEXT, RESPONSE)
    [paper] = manipulate(mlm, item, threshold=0.5, paper=True)
    [ours] = manipulate(mlm, item, threshold=0.5)
    assert paper.selected and not ours.selected


def test_the_paper_setting_is_a_setup_of_its_own():
    assert ManipulationSettings(paper=True).describe()["paper"] is True
    assert "paper" not in ManipulationSettings().describe()  # setups from before keep their digest
