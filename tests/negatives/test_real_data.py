"""The manipulation on DailyDialog test dialogues (3 context turns, the 4th as ground truth), with a
tiny MLM fine-tuned on DailyDialog train text (skipped without ../shared/data)."""

import pytest

from negatives.manipulation import Item, ManipulationSettings, Manipulator
from negatives.mlm import MaskedLM
from tests.conftest import SHARED_DATA
from tests.negatives.dialogues import read_dailydialog

QUESTIONS = 60

# a model fine-tuned on real text: the outcome does not depend on the database engine
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def results(dialogue_mlm_dir):
    test_file = SHARED_DATA / "dailydialog" / "test" / "dialogues_test.txt"
    if not test_file.is_file():
        pytest.skip(f"DailyDialog test is missing: {test_file} (set WELLCHOSEN_SHARED_DATA to ../shared/data)")
    mlm = MaskedLM.load(dialogue_mlm_dir, setting="test", device="cpu")
    dialogues = [d for d in read_dailydialog(test_file) if len(d) >= 4]
    items = [Item(key=n, context=d[:3], response=d[3]) for n, d in enumerate(dialogues[:QUESTIONS])]
    # every word replaced: the tiny model's scores carry little of the context, so a threshold
    # would select next to nothing (bench/negatives.py measures selection with a real model)
    return items, Manipulator(
        mlm, ManipulationSettings(threshold=-1e9, per_question=2, single_piece_words=False)
    ).manipulate(items)


def test_every_ground_truth_of_three_words_or_more_is_scored_word_by_word(results):
    items, manipulated = results
    for item, result in zip(items, manipulated, strict=True):
        if result.outcome == "too_short":
            assert len(item.response.split()) < 3
            continue
        assert result.outcome == "generated" and len(result.negatives) == 2
        assert all(w.logp_context <= 0 and w.logp_alone <= 0 for w in result.words)
        assert "".join(w.text for w in result.words) == "".join(item.response.split())  # every character, once


def test_a_higher_threshold_never_selects_more_words(results):
    _, manipulated = results
    scored = [r for r in manipulated if r.words]
    counts = [sum(sum(w.score > t for w in r.words) for r in scored) for t in (0.0, 0.5, 1.0, 2.0)]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]


def test_a_negative_changes_exactly_the_selected_words_and_nothing_else(results):
    items, manipulated = results
    for item, result in zip(items, manipulated, strict=True):
        for negative in result.negatives:
            assert [r["word"] for r in negative.replacements] == result.selected
            kept = [w.text for w in result.words if w.index not in result.selected]
            rest = negative.text
            for word in kept:  # the words left alone appear, in order, in the negative
                assert word in rest, (item.response, negative.text)
                rest = rest[rest.index(word) + len(word) :]
            assert negative.text != item.response
