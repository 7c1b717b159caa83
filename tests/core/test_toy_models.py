"""The toy models' shared parts: a reproducible WordPiece vocabulary, the marker and when a folder is current."""

import json

import pytest

from core.toy_models import (
    TOY_MARKER,
    folder_is_toy,
    recipe_fingerprint,
    shuffled_batches,
    toy_folder_current,
    wordpiece_tokenizer_train,
)
from tests.tiny_models import TEXTS

RECIPE = {"steps": 3, "seed": 0}


def toy_folder(folder, recipe=RECIPE):
    folder.mkdir(parents=True, exist_ok=True)
    config = {"model_type": "gpt2", TOY_MARKER: {"purpose": "toy", "recipe": recipe_fingerprint(recipe)}}
    (folder / "config.json").write_text(json.dumps(config))
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        (folder / name).write_text("{}")
    return folder


@pytest.mark.slow
@pytest.mark.heavy  # trains tokenizers; no database
def test_the_wordpiece_vocabulary_is_the_same_on_every_run_and_holds_the_frequent_words():
    texts = TEXTS * 5
    first = wordpiece_tokenizer_train(texts, vocab_size=200, max_length=64)
    again = wordpiece_tokenizer_train(texts, vocab_size=200, max_length=64)
    assert first.get_vocab() == again.get_vocab()
    assert first.tokenize("Did you book the tickets?") == ["did", "you", "book", "the", "tickets", "?"]
    # a word it has not seen is cut into known pieces, never unknown
    assert first.tokenize("carrying") == ["carry", "##i", "##n", "##g"]


def test_a_folder_is_current_only_with_its_recipe_and_every_file(tmp_path):
    folder = toy_folder(tmp_path / "toy")
    assert toy_folder_current(folder, recipe=RECIPE)
    assert not toy_folder_current(folder, recipe={**RECIPE, "steps": 4})
    (folder / "model.safetensors").unlink()
    assert not toy_folder_current(folder, recipe=RECIPE)
    assert not toy_folder_current(tmp_path / "missing", recipe=RECIPE)


def test_only_a_folder_with_the_marker_is_a_toy_model(tmp_path, tiny_gpt2_dir):
    assert folder_is_toy(toy_folder(tmp_path / "toy"))
    assert not folder_is_toy(tiny_gpt2_dir)
    assert not folder_is_toy("")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{not json")
    assert not folder_is_toy(tmp_path / "broken")


def test_batches_visit_every_example_once_per_pass_in_a_seeded_order():
    batches = shuffled_batches(10, batch_size=5, seed=3)
    first_pass = [next(batches), next(batches)]
    assert sorted(i for batch in first_pass for i in batch) == list(range(10))
    again = shuffled_batches(10, batch_size=5, seed=3)
    assert [next(again), next(again)] == first_pass
    # fewer examples than a batch: batches of all of them
    assert sorted(next(shuffled_batches(3, batch_size=8, seed=0))) == [0, 1, 2]
