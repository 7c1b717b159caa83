"""Toy language models, trained in seconds on a CPU so that the demo (`load_demo`) can try every
step offline: what negatives' masked LM and evaluation's causal system share.

A toy model is an ordinary Hugging Face folder (config, safetensors weights, fast tokenizer) whose
``config.json`` carries ``TOY_MARKER``: what it is for and the recipe that made it. The marker
travels with the weights, so whatever registers or loads the folder (a system, the negatives'
masked LM) can record that its numbers come from a toy model and say so on every page, without
relying on a name. torch, tokenizers and transformers are imported inside the functions: the
web process imports this module to read a marker.
"""

import hashlib
import json
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

TOY_MARKER = "wellchosen_toy_model"  # a key of config.json
TOY_PURPOSE = (
    "a toy model trained in seconds by load_demo for trying the workflow; its numbers say nothing about real systems"
)
WEIGHTS = "model.safetensors"


def toy_marker(folder: str | Path) -> dict | None:
    """The toy marker of the model in ``folder``, or None (no folder, no config, not a toy model)."""
    path = Path(folder) / "config.json" if str(folder) else None
    if path is None or not path.is_file():
        return None
    try:
        marker = json.loads(path.read_text(encoding="utf-8")).get(TOY_MARKER)
    except (OSError, ValueError, AttributeError):
        return None
    return marker if isinstance(marker, dict) else None


def folder_is_toy(folder: str | Path) -> bool:
    return toy_marker(folder) is not None


def recipe_fingerprint(recipe: dict) -> str:
    """A digest of what makes the weights (sizes, steps, seed, text cap): another recipe retrains."""
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]


def toy_folder_current(folder: Path, *, recipe: dict) -> bool:
    """Whether ``folder`` holds a complete toy model made by ``recipe`` (then it is not trained again)."""
    marker = toy_marker(folder)
    return (
        marker is not None
        and marker.get("recipe") == recipe_fingerprint(recipe)
        and all((folder / name).is_file() for name in (WEIGHTS, "tokenizer.json", "tokenizer_config.json"))
    )


@dataclass
class ToyModel:
    """What a toy model's trainer makes: its tokenizer, its model (fresh weights) and its batches;
    ``loss(model, batch)`` when the model's own loss is not the one to minimise."""

    tokenizer: object
    model: object
    batches: Iterator[dict]
    loss: Callable | None = None


def toy_model_make(*, folder: Path, recipe: dict, trained_on: dict[str, int], build: Callable[[], ToyModel]) -> dict:
    """Seed torch by ``recipe["seed"]``, ``build()`` the model, train it ``recipe["steps"]`` steps at
    ``recipe["learning_rate"]``, mark its config and save it with its tokenizer in ``folder``
    (replaced whole). Returns the losses, what it was trained on and the seconds it took."""
    import torch

    started = time.monotonic()
    result: dict = {}

    def write(scratch: Path) -> None:
        torch.manual_seed(recipe["seed"])
        toy = build()
        result.update(
            toy_train(
                toy.model,
                batches=toy.batches,
                steps=recipe["steps"],
                learning_rate=recipe["learning_rate"],
                loss=toy.loss,
            )
        )
        setattr(
            toy.model.config,
            TOY_MARKER,
            {
                "purpose": TOY_PURPOSE,
                "recipe": recipe_fingerprint(recipe),
                "settings": recipe,
                "trained_on": trained_on,
            },
        )
        toy.model.save_pretrained(scratch)
        toy.tokenizer.save_pretrained(scratch)

    with _quiet_transformers():
        toy_folder_write(folder, write)
    return {**result, "trained_on": trained_on, "seconds": round(time.monotonic() - started, 1)}


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No progress bar ("Writing model shards") and no warnings from transformers while a toy model is
    trained and saved: load_demo's output, which make run prints, says what was loaded, a line a step."""
    from transformers.utils import logging as transformers_logging

    bars, verbosity = transformers_logging.is_progress_bar_enabled(), transformers_logging.get_verbosity()
    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(verbosity)
        if bars:
            transformers_logging.enable_progress_bar()


def toy_folder_write(folder: Path, build: Callable[[Path], None]) -> None:
    """Run ``build(scratch)`` in a hidden folder next to ``folder`` and put the result in its place:
    an interrupted training leaves no half-written model, and an outdated one is replaced whole."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".partial", dir=folder.parent))
    try:
        build(scratch)
        if folder.exists():
            shutil.rmtree(folder)
        scratch.rename(folder)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def bpe_tokenizer_train(texts: Iterable[str], *, vocab_size: int, end_token: str = "<|endoftext|>"):
    """A byte-level BPE (GPT-2's kind) trained on ``texts``; its one special token ends a text and pads."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[end_token],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token=end_token, eos_token=end_token, pad_token=end_token
    )


def wordpiece_tokenizer_train(texts: Iterable[str], *, vocab_size: int, max_length: int):
    """An uncased WordPiece tokenizer with BERT's special tokens and its pair template. Its vocabulary
    is every character (alone and as a ``##`` piece) and then the most frequent words of ``texts``
    (ties in alphabetical order): the tokenizers library's WordPiece trainer breaks ties between
    equally frequent pairs in a hash map's order, which changes from run to run, and a toy model
    must come out the same every time. A rarer word is cut into the longest known pieces."""
    from collections import Counter

    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    normalizer, pre_tokenizer = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    words = Counter(
        word for text in texts for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text))
    )
    characters = sorted({character for word in words for character in word})
    vocabulary = [*special, *characters, *(f"##{character}" for character in characters)]
    frequent = [word for word, _ in sorted(words.items(), key=lambda item: (-item[1], item[0])) if len(word) > 1]
    vocabulary += frequent[: max(0, vocab_size - len(vocabulary))]
    tokenizer = Tokenizer(models.WordPiece({token: i for i, token in enumerate(vocabulary)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.WordPiece()
    return bert_tokenizer_fast(tokenizer, max_length=max_length)


def bert_tokenizer_fast(tokenizer, *, max_length: int):
    """``tokenizer`` (a tokenizers ``Tokenizer`` holding BERT's special tokens) with BERT's pair
    template, as the fast tokenizer transformers loads for a BERT model."""
    from tokenizers import processors
    from transformers import BertTokenizerFast

    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return BertTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=max_length,
    )


def shuffled_batches(size: int, *, batch_size: int, seed: int) -> Iterator[list[int]]:
    """Endless batches of indexes into ``size`` examples: a seeded order, shuffled again on each pass
    (a small text cap with fewer examples than a batch gives batches of all of them)."""
    rng = random.Random(seed)
    batch_size = min(batch_size, size)
    while True:
        order = list(range(size))
        rng.shuffle(order)
        for start in range(0, size - batch_size + 1, batch_size):
            yield order[start : start + batch_size]


def toy_train(model, *, batches: Iterator[dict], steps: int, learning_rate: float, loss=None) -> dict:
    """``steps`` AdamW steps on the CPU, the learning rate decaying linearly to a tenth; ``loss(model,
    batch)`` (default: the model's own, from the batch's ``labels``) is minimised. The caller seeds
    torch (the initial weights) and the batches. Returns the first and the last losses.

    It runs on one thread: the same weights come out on any machine (more threads add up floats in
    another order), and the small matrices of a toy model gain little from a second core but lose
    much when the cores are busy (20 steps of the demo's masked LM on 2 cores under a load of 5:
    27.7 s with two threads, 7.8 s with one)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.1, total_iters=steps)
    losses = []
    try:
        for _ in range(steps):
            batch = next(batches)
            value = loss(model, batch) if loss is not None else model(**batch).loss
            value.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(value.item())
    finally:
        torch.set_num_threads(threads)
        model.eval()
    last = losses[-10:]
    return {"steps": steps, "first_loss": round(losses[0], 4), "last_loss": round(sum(last) / len(last), 4)}
