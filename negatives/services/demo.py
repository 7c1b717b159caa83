"""The negatives part of the demo (`make run`): a toy masked LM, BERT-shaped like the paper's
bert-base-uncased but 2 layers wide of 64, trained in seconds on the demo dialogues (and
DailyDialog train when the real corpora are there), so that negatives can be generated before any
WELLCHOSEN_MLM_MODEL is set (negatives.demo_mlm makes it the default then). A model step of
annotation's demo loader, registered in apps.py."""

from pathlib import Path

from annotation.services.demo_texts import DemoTexts, demo_training_dialogues
from core.readable import count
from core.toy_models import ToyModel, shuffled_batches, toy_folder_current, toy_model_make, wordpiece_tokenizer_train
from negatives.demo_mlm import DEMO_MLM, demo_mlm_folder
from negatives.manipulation import dialogue_pairs

# What makes the weights; another recipe retrains the folder. max_chars caps the text (about 10 %
# of DailyDialog train): 150 steps of 32 texts see most of it once. Twice BERT's share of masked
# tokens costs nothing here (the head runs at the masked positions only) and teaches more per step:
# on the demo dialogues it makes negatives at the paper's threshold (3 of 40), 15 % none.
DEMO_MLM_RECIPE = {
    "model": "bert",
    "hidden_size": 64,
    "layers": 2,
    "heads": 2,
    "intermediate_size": 256,
    "vocab_size": 3000,
    "max_length": 96,
    "steps": 150,
    "batch_size": 32,
    "learning_rate": 2e-3,
    "mlm_probability": 0.3,
    "max_chars": 600_000,
    "seed": 0,
}


def demo_masked_lm() -> list[str]:
    """Train the demo's masked LM unless its folder holds it already."""
    folder = demo_mlm_folder()
    if toy_folder_current(folder, recipe=DEMO_MLM_RECIPE):
        return []
    report = demo_mlm_train(folder=folder, recipe=DEMO_MLM_RECIPE)
    trained_on = " and ".join(f"{count(n)} {source}" for source, n in report["trained_on"].items())
    return [
        f"masked LM {DEMO_MLM}: a toy model for trying the workflow, trained in {report['seconds']} s on "
        f"{trained_on} (loss {report['first_loss']} → {report['last_loss']}); the default masked LM while "
        "WELLCHOSEN_MLM_MODEL is unset"
    ]


def demo_mlm_train(*, folder: Path, recipe: dict) -> dict:
    """Train a tokenizer and a BERT masked LM by ``recipe`` and save both in ``folder`` (replaced whole)."""
    from transformers import BertConfig, BertForMaskedLM, DataCollatorForLanguageModeling

    texts = demo_training_dialogues(max_chars=recipe["max_chars"])

    def build() -> ToyModel:
        tokenizer = wordpiece_tokenizer_train(
            (turn for dialogue in texts.dialogues for turn in dialogue),
            vocab_size=recipe["vocab_size"],
            max_length=recipe["max_length"],
        )
        config = BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=recipe["hidden_size"],
            num_hidden_layers=recipe["layers"],
            num_attention_heads=recipe["heads"],
            intermediate_size=recipe["intermediate_size"],
            max_position_embeddings=recipe["max_length"],
            pad_token_id=tokenizer.pad_token_id,
        )
        collator = DataCollatorForLanguageModeling(
            tokenizer=tokenizer, mlm=True, mlm_probability=recipe["mlm_probability"], seed=recipe["seed"]
        )
        examples = _encoded_pairs(texts, tokenizer, max_length=recipe["max_length"])
        batches = (
            collator([examples[i] for i in batch])
            for batch in shuffled_batches(len(examples), batch_size=recipe["batch_size"], seed=recipe["seed"])
        )
        return ToyModel(tokenizer=tokenizer, model=BertForMaskedLM(config), batches=batches, loss=_masked_loss)

    return toy_model_make(folder=folder, recipe=recipe, trained_on=texts.sources, build=build)


def _encoded_pairs(texts: DemoTexts, tokenizer, *, max_length: int) -> list[dict]:
    """Every turn with the turns before it, ``[CLS] context [SEP] turn [SEP]`` as the manipulation
    reads a response (a long context loses its oldest tokens, as there)."""
    pairs = [pair for dialogue in texts.dialogues for pair in dialogue_pairs(dialogue)]
    tokenizer.truncation_side = "left"
    alone = [text for context, text in pairs if not context]
    both = [(context, text) for context, text in pairs if context]
    encoded = [tokenizer(alone, truncation=True, max_length=max_length, return_special_tokens_mask=True)]
    encoded.append(
        tokenizer(
            [c for c, _ in both],
            [t for _, t in both],
            truncation="longest_first",
            max_length=max_length,
            return_special_tokens_mask=True,
        )
    )
    tokenizer.truncation_side = "right"
    return [{key: values[i] for key, values in part.items()} for part in encoded for i in range(len(part["input_ids"]))]


def _masked_loss(model, batch: dict):
    """The masked-LM loss with the vocabulary head applied at the masked positions only (BertForMaskedLM
    applies it everywhere: 85 % of the work of a small model's step would be thrown away)."""
    import torch

    labels = batch["labels"]
    inputs = {key: value for key, value in batch.items() if key not in ("labels", "special_tokens_mask")}
    hidden = model.bert(**inputs).last_hidden_state
    masked = labels != -100
    return torch.nn.functional.cross_entropy(model.cls(hidden[masked]), labels[masked])
