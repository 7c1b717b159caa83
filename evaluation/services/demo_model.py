"""The demo's causal system (`make run`): a toy GPT-2 (2 layers wide of 64) trained in seconds on
the demo dialogues (and DailyDialog train when the real corpora are there), registered as the
system ``demo-tiny-gpt`` so that evaluations, generations and campaigns can be tried before any
real checkpoint is at hand. Its folder's marker (core.toy_models) makes the system a toy model,
which every page that shows its numbers says. A model step of annotation's demo loader,
registered in apps.py."""

from pathlib import Path

from django.conf import settings

from annotation.services.demo_texts import DemoTexts, demo_training_dialogues
from core.readable import count
from core.toy_models import ToyModel, bpe_tokenizer_train, shuffled_batches, toy_folder_current, toy_model_make
from evaluation.models import System, SystemKind

from .systems import system_register

DEMO_CAUSAL_SYSTEM = "demo-tiny-gpt"
TURN_SEPARATOR = "\n"  # between turns in training and, as the system's separator, when scoring
# What makes the weights; another recipe retrains the folder. Texts are packed into blocks of
# block_size tokens; 200 steps of 16 blocks see the text cap's 1 M characters about 1.5 times.
DEMO_GPT_RECIPE = {
    "model": "gpt2",
    "n_embd": 64,
    "layers": 2,
    "heads": 2,
    "n_inner": 256,
    "vocab_size": 2000,
    "block_size": 128,
    "steps": 200,
    "batch_size": 16,
    "learning_rate": 3e-3,
    "max_chars": 1_000_000,
    "seed": 0,
}


def demo_causal_folder() -> Path:
    return Path(settings.WELLCHOSEN_DATA_DIR) / "models" / DEMO_CAUSAL_SYSTEM


def demo_causal_system() -> list[str]:
    """Train the demo's causal LM unless its folder holds it already, and register it as a system."""
    folder = demo_causal_folder()
    done = []
    if not toy_folder_current(folder, recipe=DEMO_GPT_RECIPE):
        report = demo_gpt_train(folder=folder, recipe=DEMO_GPT_RECIPE)
        trained_on = " and ".join(f"{count(n)} {source}" for source, n in report["trained_on"].items())
        done.append(
            f"causal LM {DEMO_CAUSAL_SYSTEM}: a toy model for trying the workflow, trained in {report['seconds']} s "
            f"on {trained_on} (loss {report['first_loss']} → {report['last_loss']})"
        )
    system = System.objects.filter(name=DEMO_CAUSAL_SYSTEM).first()
    # a retrained folder is registered again: the system's new version makes older evaluations stale
    if done or system is None or system.checkpoint != str(folder.resolve()):
        system_register(
            name=DEMO_CAUSAL_SYSTEM,
            kind=SystemKind.CAUSAL,
            checkpoint=str(folder),
            max_context_tokens=DEMO_GPT_RECIPE["block_size"] - 32,
            max_candidate_tokens=32,
            turn_separator=TURN_SEPARATOR,
            description="A toy causal LM (GPT-2 shaped, 2 layers of 64) trained in seconds by load_demo on the "
            "demo dialogues (and DailyDialog train when it is there), for trying the workflow: its accuracies "
            "and responses say nothing about real systems. Register a real checkpoint for real numbers.",
        )
        done.append(f"system {DEMO_CAUSAL_SYSTEM}: the toy causal LM in {folder}")
    return done


def demo_gpt_train(*, folder: Path, recipe: dict) -> dict:
    """Train a byte-level BPE and a GPT-2 by ``recipe`` and save both in ``folder`` (replaced whole)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    texts = demo_training_dialogues(max_chars=recipe["max_chars"])

    def build() -> ToyModel:
        tokenizer = bpe_tokenizer_train(
            (turn for dialogue in texts.dialogues for turn in dialogue), vocab_size=recipe["vocab_size"]
        )
        config = GPT2Config(
            vocab_size=len(tokenizer),
            n_positions=recipe["block_size"],
            n_embd=recipe["n_embd"],
            n_layer=recipe["layers"],
            n_head=recipe["heads"],
            n_inner=recipe["n_inner"],
            bos_token_id=tokenizer.eos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        blocks = _blocks(texts, tokenizer, block_size=recipe["block_size"])
        tokenizer.model_max_length = recipe["block_size"]
        batches = (
            {"input_ids": blocks[batch], "attention_mask": torch.ones_like(blocks[batch]), "labels": blocks[batch]}
            for batch in shuffled_batches(len(blocks), batch_size=recipe["batch_size"], seed=recipe["seed"])
        )
        return ToyModel(tokenizer=tokenizer, model=GPT2LMHeadModel(config), batches=batches)

    return toy_model_make(folder=folder, recipe=recipe, trained_on=texts.sources, build=build)


def _blocks(texts: DemoTexts, tokenizer, *, block_size: int):
    """The dialogues as one token stream (turns joined by the separator, each dialogue ended by
    the end-of-text token, as a system reads a context and its candidate), cut into blocks."""
    import torch

    encoded = tokenizer([TURN_SEPARATOR.join(dialogue) for dialogue in texts.dialogues])["input_ids"]
    stream = [token for ids in encoded for token in (*ids, tokenizer.eos_token_id)]
    usable = max(1, len(stream) // block_size) * block_size
    stream = (stream * (usable // len(stream) + 1))[:usable]  # a tiny text cap still fills one block
    return torch.tensor(stream).view(-1, block_size)
