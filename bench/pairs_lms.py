"""Two small causal LMs trained here on DailyDialog train, for bench/pairs.py: a 2-layer and a
6-layer GPT-2 with one byte-level BPE tokenizer, trained for different numbers of steps, so that
their held-out perplexities differ and pair correctness can be compared with that order.

    .venv/bin/python bench/pairs_lms.py --out /tmp/pairs-lms [--checkpoints 150,300,450]

Training text: every DailyDialog train dialogue as its turns joined by newlines (the context
template of the systems that score the pairs: ``ContextTemplate("\\n")``), cut into blocks of 128
tokens. AdamW, linear warm-up and decay, seed 0, float32 on the CPU.
"""

import argparse
import math
import os
import random
import sys
import time
from pathlib import Path

import torch

SHARED = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
MODELS = {  # name: (layers, width, heads, steps)
    "gpt2-2l": (2, 128, 4, 600),
    "gpt2-6l": (6, 256, 8, 1000),
}
BLOCK = 128


def dialogues(split: str) -> list[list[str]]:
    path = SHARED / "dailydialog" / split / f"dialogues_{split}.txt"
    if not path.exists():
        sys.exit(f"DailyDialog is missing: {path} (see ../shared/data/README.md)")
    with path.open(encoding="utf-8") as handle:
        return [[t.strip() for t in line.split("__eou__") if t.strip()] for line in handle if line.strip()]


def train_tokenizer(folder: Path, texts: list[str], vocab_size: int = 8192):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    special = {"pad_token": "<pad>", "bos_token": "<s>", "eos_token": "</s>"}
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(special.values()),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, **special)
    fast.save_pretrained(folder)
    return fast


def blocks(tokenizer, train: list[list[str]]) -> torch.Tensor:
    ids: list[int] = []
    for dialogue in train:
        ids.extend(tokenizer("".join(turn + "\n" for turn in dialogue))["input_ids"])
        ids.append(tokenizer.eos_token_id)
    n = len(ids) // BLOCK
    return torch.tensor(ids[: n * BLOCK]).view(n, BLOCK)


def save(model, tokenizer, folder: Path) -> None:
    model.eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    model.train()


def train(
    name: str, tokenizer, data: torch.Tensor, out: Path, *, batch: int, seed: int, checkpoints: frozenset[int]
) -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    layers, width, heads, steps = MODELS[name]
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=512,
        n_embd=width,
        n_layer=layers,
        n_head=heads,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = GPT2LMHeadModel(config).train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    warmup = max(1, steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup)))
    )
    rng = random.Random(seed)
    started = time.perf_counter()
    for step in range(steps):
        rows = torch.tensor(rng.sample(range(len(data)), batch))
        inputs = data[rows]
        loss = model(input_ids=inputs, labels=inputs).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad(set_to_none=True)
        if step % 200 == 0 or step == steps - 1:
            print(f"{name} step {step + 1}/{steps}: loss {loss.item():.3f} ({time.perf_counter() - started:.0f} s)")
        if step + 1 in checkpoints and step + 1 < steps:
            save(model, tokenizer, out / f"{name}-step{step + 1}")
    folder = out / name
    save(model, tokenizer, folder)
    params = sum(p.numel() for p in model.parameters())
    print(f"{name}: {layers} layers, width {width}, {params / 1e6:.1f} M parameters, {steps} steps -> {folder}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=sorted(MODELS), default=None)
    parser.add_argument(
        "--checkpoints", default="", help="also save each model after these steps (comma-separated), as more models"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    train_dialogues = dialogues("train")
    args.out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(args.out / "tokenizer", [t for d in train_dialogues for t in d])
    data = blocks(tokenizer, train_dialogues)
    print(f"{len(train_dialogues)} dialogues, {data.numel():,} tokens in {len(data)} blocks of {BLOCK}")
    print(f"one epoch is {math.ceil(len(data) / args.batch)} steps of {args.batch} blocks")
    for name in [args.only] if args.only else MODELS:
        checkpoints = frozenset(int(s) for s in args.checkpoints.split(",") if s)
        train(name, tokenizer, data, args.out, batch=args.batch, seed=args.seed, checkpoints=checkpoints)


if __name__ == "__main__":
    main()
