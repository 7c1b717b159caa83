"""The masked-LM training run: streamed texts, transformers' MLM collator and Trainer.

Kept apart from negatives.services.finetuning, which checks the inputs and owns the output
folder, because this module loads torch and transformers when imported.
"""

import logging
import random
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

import torch
from torch.utils.data import IterableDataset
from transformers import (
    DataCollatorForLanguageModeling,
    PrinterCallback,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)

from negatives.mlm import MaskedLM

logger = logging.getLogger(__name__)

PHASE = "fine-tuning"
SHUFFLE_BUFFER = 10_000  # texts held for shuffling: dialogues are stored turn after turn
TOKENIZE_CHUNK = 256  # texts per call of the (fast, batched) tokenizer


def mlm_train(
    *,
    mlm: MaskedLM,
    read: Callable[[], Iterator[tuple[str, str]]],
    folder: Path,
    steps: int,
    batch_size: int,
    learning_rate: float,
    mlm_probability: float,
    max_length: int,
    seed: int,
    progress=None,
) -> dict:
    """Train ``mlm`` for ``steps`` batches of the texts ``read()`` yields (read again for each
    epoch) and save model and tokenizer in ``folder``. ``progress``: a JobProgress or None."""
    on_gpu = torch.cuda.is_available()
    args = TrainingArguments(
        output_dir=str(folder),
        per_device_train_batch_size=batch_size,
        learning_rate=learning_rate,
        max_steps=steps,  # the texts stream, so the Trainer cannot count an epoch itself
        lr_scheduler_type="linear",
        seed=seed,
        data_seed=seed,
        bf16=on_gpu and torch.cuda.is_bf16_supported(),
        use_cpu=not on_gpu,
        dataloader_pin_memory=on_gpu,
        remove_unused_columns=False,  # keeps the special-tokens mask for the collator
        save_strategy="no",
        logging_strategy="steps",
        logging_steps=max(1, min(100, steps // 10)),
        report_to="none",
        disable_tqdm=True,
    )
    collator = DataCollatorForLanguageModeling(
        tokenizer=mlm.tokenizer, mlm=True, mlm_probability=mlm_probability, seed=seed
    )
    texts = TokenizedTexts(read=read, tokenizer=mlm.tokenizer, max_length=max_length, seed=seed)
    trainer = Trainer(
        model=mlm.model,
        args=args,
        train_dataset=texts,
        data_collator=collator,
        processing_class=mlm.tokenizer,
        callbacks=[ProgressCallback(progress)],
    )
    trainer.remove_callback(PrinterCallback)  # the log goes through logging, not stdout
    output = trainer.train()
    trainer.save_model(str(folder))
    (folder / "training_args.bin").unlink(missing_ok=True)  # a pickle of the arguments; the report says them
    return {"steps": output.global_step, "train_loss": float(output.training_loss), "device": str(args.device)}


def shuffled(texts: Iterator, rng: random.Random, size: int) -> Iterator:
    """``texts`` in a random order within a window of ``size``: a stream cannot be shuffled whole."""
    buffer = list(islice(texts, size))
    for text in texts:
        index = rng.randrange(len(buffer))
        yield buffer[index]
        buffer[index] = text
    rng.shuffle(buffer)
    yield from buffer


class TokenizedTexts(IterableDataset):
    """The ``(context, text)`` pairs, shuffled (another order each pass, seeded) and tokenized, as
    the collator wants them. Read afresh on every pass, so an epoch holds at most the shuffle buffer in memory."""

    def __init__(self, *, read: Callable[[], Iterator[tuple[str, str]]], tokenizer, max_length: int, seed: int) -> None:
        self.read = read
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.seed = seed
        self.passes = 0

    def __iter__(self):
        rng = random.Random(f"{self.seed}:{self.passes}")
        self.passes += 1
        self.tokenizer.truncation_side = "left"  # a long context loses its oldest tokens, as when scoring
        texts = shuffled(iter(self.read()), rng, SHUFFLE_BUFFER)
        while chunk := list(islice(texts, TOKENIZE_CHUNK)):
            # (context, text) pairs are the model's two segments; a text without context is one segment
            for group in ([t for c, t in chunk if not c], [(c, t) for c, t in chunk if c]):
                if not group:
                    continue
                if isinstance(group[0], str):
                    encoded = self.tokenizer(
                        group, truncation=True, max_length=self.max_length, return_special_tokens_mask=True
                    )
                else:
                    encoded = self.tokenizer(
                        [c for c, _ in group],
                        [t for _, t in group],
                        truncation="longest_first",  # a response longer than max_length loses tokens too
                        max_length=self.max_length,
                        return_special_tokens_mask=True,
                    )
                for i in range(len(group)):
                    yield {key: values[i] for key, values in encoded.items()}


class ProgressCallback(TrainerCallback):
    """Logs the loss and reports the steps done to the job's progress, if any (a cancel
    requested there raises JobCancelled out of the training loop)."""

    def __init__(self, progress) -> None:
        self.progress = progress

    def on_train_begin(self, args, state, control, **kwargs):
        if self.progress is not None:
            self.progress.update(done=0, total=state.max_steps, phase=PHASE, unit="steps", force=True)

    def on_step_end(self, args, state, control, **kwargs):
        if self.progress is not None:
            self.progress.update(done=state.global_step, total=state.max_steps, phase=PHASE)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            logger.info("step %s/%s: loss %.4f", state.global_step, state.max_steps, logs["loss"])
