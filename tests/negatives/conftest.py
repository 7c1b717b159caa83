"""Tiny masked LMs for the negatives tests, and dialogue text to train and measure them on.

With ../shared/data present the text is DailyDialog (train to train on, validation held out);
without it, the test texts of tests.tiny_models (a few for training, the rest held out).
"""

from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA
from tests.negatives.dialogues import DialogueText, read_dailydialog
from tests.tiny_models import TEXTS, build_tiny_mlm

DAILYDIALOG = SHARED_DATA / "dailydialog"
DIALOGUE_MLM_UTTERANCES = 3000  # the fixture's (context, turn) pairs: ~15 s on two CPU cores


@pytest.fixture(scope="session")
def dialogue_text() -> DialogueText:
    train = DAILYDIALOG / "train" / "dialogues_train.txt"
    validation = DAILYDIALOG / "validation" / "dialogues_validation.txt"
    if train.is_file() and validation.is_file():
        held_out = [turn for dialogue in read_dailydialog(validation)[:60] for turn in dialogue]
        return DialogueText("dailydialog", read_dailydialog(train), held_out)
    return DialogueText("test texts", [list(TEXTS[i : i + 4]) for i in range(0, 12, 4)], list(TEXTS[12:]))


@pytest.fixture(scope="session")
def dialogue_tiny_mlm_dir(dialogue_text, tmp_path_factory) -> Path:
    """A 2-layer BERT masked LM with random weights; its WordPiece vocabulary is learnt from the
    training dialogues (DailyDialog train when present)."""
    texts = dialogue_text.utterances if dialogue_text.source == "dailydialog" else None
    return build_tiny_mlm(tmp_path_factory.mktemp("dialogue-tiny-mlm"), texts=texts)


@pytest.fixture(scope="session")
def mlm_loss(dialogue_text):
    """``mlm_loss(folder, texts=None)``: the masked-LM loss (nats per masked token) of the model in
    ``folder`` on ``texts`` (default: the held-out utterances). The MLM collator draws the masks
    from a fixed seed, and fine-tuning keeps the tokenizer, so two models see the same masks."""
    import torch
    from transformers import DataCollatorForLanguageModeling

    from negatives.mlm import MaskedLM

    def measure(folder: Path, texts: list[str] | None = None, *, rounds: int = 4, seed: int = 1234) -> float:
        mlm = MaskedLM.load(folder, setting="test", device="cpu")
        collator = DataCollatorForLanguageModeling(mlm.tokenizer, mlm=True, mlm_probability=0.15, seed=seed)
        texts = dialogue_text.held_out if texts is None else texts
        features = [mlm.tokenizer(text, truncation=True, max_length=64) for text in texts]
        total, masked = 0.0, 0
        with torch.inference_mode():
            for _ in range(rounds):  # more masks than one pass gives: a steadier number
                for start in range(0, len(features), 64):
                    batch = collator(features[start : start + 64])
                    labels = batch.pop("labels")
                    logits = mlm.model(**batch).logits
                    total += torch.nn.functional.cross_entropy(
                        logits.view(-1, logits.shape[-1]), labels.view(-1), ignore_index=-100, reduction="sum"
                    ).item()
                    masked += int((labels != -100).sum())
        return total / masked

    return measure


@pytest.fixture(scope="session")
def dialogue_mlm_dir(dialogue_text, dialogue_tiny_mlm_dir, tmp_path_factory) -> Path:
    """The tiny MLM fine-tuned by the training run of finetune_mlm (negatives.training) on dialogue
    text: the first few thousand DailyDialog train turns, each with the turns before it, when
    present; the test texts otherwise. Its predictions follow that text, as the paper's fine-tuned BERT's do. (The
    service around it, which reads a dataset or repository, is tested in test_finetuning.py.)"""
    import math

    from negatives.manipulation import dialogue_pairs
    from negatives.mlm import MaskedLM
    from negatives.training import mlm_train

    pairs = (pair for turns in dialogue_text.dialogues for pair in dialogue_pairs(turns))
    texts = list(dict.fromkeys(pairs))[:DIALOGUE_MLM_UTTERANCES]
    epochs = 2 if dialogue_text.source == "dailydialog" else 40
    out = tmp_path_factory.mktemp("dialogue-mlm") / "model"
    mlm_train(
        mlm=MaskedLM.load(dialogue_tiny_mlm_dir, setting="test", device="cpu"),
        read=lambda: iter(texts),
        folder=out,
        steps=math.ceil(len(texts) * epochs / 32),
        batch_size=32,
        learning_rate=2e-3,  # a random tiny model, not a pre-trained BERT: it has everything to learn
        mlm_probability=0.15,
        max_length=64,
        seed=0,
    )
    return out
