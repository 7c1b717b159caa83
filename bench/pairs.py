"""Contrastive response pairs (Okano et al.) on DailyDialog: what the rules make, and whether
pair correctness orders two small LMs as their held-out perplexity does.

Questions: each DailyDialog test dialogue of four turns or more, the first three turns as
context and the fourth as the correct response (as Sato et al. build theirs). The repository of
the bigram model and the noun vocabulary: every DailyDialog train turn and the Cornell
movie-lines sample. Measured:

- pairs per 1,000 ground truths of each type, sub-type and criterion, and why the others were
  skipped; the time each rule takes;
- ``--sample-out FILE``: 50 pairs per type drawn with the seed, for a manual check (a reader marks
  each broken or not; docs/pairs.md has the result);
- with ``--lms DIR`` (two GPT-2 models from bench/pairs_lms.py): each model's perplexity on the
  DailyDialog validation questions' fourth turns, and its pair correctness overall and per type
  with bootstrap 95 % intervals, scored by the scoring core of the systems (evaluation.scoring).

    .venv/bin/python bench/pairs_lms.py --out /tmp/pairs-lms
    .venv/bin/python bench/pairs.py --sample-out /tmp/pairs-sample.jsonl --lms /tmp/pairs-lms
"""

import argparse
import json
import math
import os
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SHARED = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
CORNELL = SHARED / "cornell_PARTIAL" / "movie_lines.PARTIAL_m0-m58_truncated_CRLF.txt"


def dialogues(split: str) -> list[list[str]]:
    path = SHARED / "dailydialog" / split / f"dialogues_{split}.txt"
    if not path.exists():
        sys.exit(f"DailyDialog is missing: {path} (see ../shared/data/README.md)")
    with path.open(encoding="utf-8") as handle:
        return [[t.strip() for t in line.split("__eou__") if t.strip()] for line in handle if line.strip()]


def questions(split: str, limit: int | None = None) -> list[tuple[list[str], str]]:
    found = [(turns[:3], turns[3]) for turns in dialogues(split) if len(turns) >= 4]
    return found[:limit] if limit else found


def repository_texts() -> list[str]:
    texts = [turn for dialogue in dialogues("train") for turn in dialogue]
    if CORNELL.exists():
        with CORNELL.open(encoding="latin-1", newline="") as handle:
            for line in handle:
                parts = line.rstrip("\r\n").split(" +++$+++ ")
                if len(parts) == 5 and parts[4].strip():
                    texts.append(parts[4].strip())
    else:
        print(f"(the Cornell sample is missing: {CORNELL}; DailyDialog train only)")
    return texts


def build_rules(texts: list[str]):
    from pairs.bigram import BigramLM
    from pairs.nouns import NounLexicon
    from pairs.rules.content_words import ContentWordRule
    from pairs.rules.function_words import FunctionWordRule
    from pairs.rules.sentence_type import SentenceTypeRule

    started = time.perf_counter()
    lm = BigramLM.fit(texts)
    fitted = time.perf_counter() - started
    content = ContentWordRule(lm=lm, lexicon=NounLexicon.load())
    print(
        f"repository: {len(texts):,} utterances; bigram model fitted in {fitted:.1f} s, "
        f"{len(content.vocabulary):,} nouns in V (rule ready {time.perf_counter() - started:.1f} s after the start)"
    )
    return [content, SentenceTypeRule(), FunctionWordRule()]


def make_pairs(rules, items, *, seed: int, per_question: int) -> tuple[list[dict], dict, dict]:
    from pairs.edits import rule_rng

    pairs: list[dict] = []
    outcomes: dict[str, Counter] = {rule.type: Counter() for rule in rules}
    seconds: dict[str, float] = defaultdict(float)
    for number, (context, response) in enumerate(items):
        for rule in rules:
            rng = rule_rng(seed=seed, rule_type=rule.type, context=context, response=response)
            started = time.perf_counter()
            outcome = rule.propose(context=context, response=response, rng=rng, per_question=per_question)
            seconds[rule.type] += time.perf_counter() - started
            edits = [e for e in outcome.edits if e.incorrect != response]
            outcomes[rule.type]["edited" if edits else outcome.skipped or "no_edit"] += 1
            for edit in edits:
                pairs.append(
                    {
                        "question": number,
                        "context": context,
                        "correct": response,
                        "incorrect": edit.incorrect,
                        "type": edit.type,
                        "subtype": edit.subtype,
                        "criterion": edit.criterion,
                        "span": list(edit.span),
                        "incorrect_span": list(edit.incorrect_span),
                    }
                )
    return pairs, outcomes, seconds


def report_counts(pairs, outcomes, seconds, n: int) -> None:
    per_k = 1000 / n
    print(f"\npairs per 1,000 ground truths ({n} DailyDialog test ground truths):")
    by_type = Counter(p["type"] for p in pairs)
    by_sub = Counter((p["type"], p["subtype"], p["criterion"]) for p in pairs)
    for kind in sorted(by_type):
        print(
            f"  {kind:9} {by_type[kind] * per_k:7.1f} pairs"
            f"   ({outcomes[kind]['edited'] * per_k:.1f} ground truths edited)"
        )
        for (k, sub, crit), count in sorted(by_sub.items()):
            if k == kind:
                label = f"{sub}{' / ' + crit.upper() if crit else ''}"
                print(f"      {label:34} {count * per_k:7.1f}")
    print("\nwhy a ground truth got no pair of a type (per 1,000):")
    for kind, counts in sorted(outcomes.items()):
        skips = ", ".join(
            f"{reason} {count * per_k:.1f}" for reason, count in counts.most_common() if reason != "edited"
        )
        print(f"  {kind:9} {skips}")
    print(
        "\nrule time per ground truth: " + ", ".join(f"{k} {1000 * s / n:.2f} ms" for k, s in sorted(seconds.items()))
    )


def write_sample(pairs, path: Path, *, per_type: int, seed: int) -> None:
    rng = random.Random(seed)
    by_type = defaultdict(list)
    for pair in pairs:
        by_type[pair["type"]].append(pair)
    with path.open("w", encoding="utf-8") as out:
        for kind in sorted(by_type):
            for pair in rng.sample(by_type[kind], min(per_type, len(by_type[kind]))):
                out.write(json.dumps(pair, ensure_ascii=False) + "\n")
    print(f"\n{per_type} pairs per type for the manual check: {path}")


def score_models(folder: Path, pairs, *, batch_tokens: int) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from evaluation.metrics.accuracy import accuracy_summary
    from evaluation.scoring import ContextTemplate
    from evaluation.scoring.lm import LMScorer

    held_out = questions("validation")
    print(f"\nmodels ({folder}); perplexity on {len(held_out)} DailyDialog validation fourth turns:")
    header = f"  {'model':14} {'params':>7} {'perplexity':>10}  {'all pairs':>22}"
    kinds = sorted({p["type"] + (f" {p['criterion'].upper()}" if p["criterion"] else "") for p in pairs})
    print(header + "".join(f"  {k:>22}" for k in kinds))
    measured: list[tuple[str, float, list[float]]] = []
    for name in sorted(p.name for p in folder.iterdir() if (p / "config.json").exists()):
        tokenizer = AutoTokenizer.from_pretrained(folder / name)
        model = AutoModelForCausalLM.from_pretrained(folder / name).eval()
        scorer = LMScorer(
            model=model, tokenizer=tokenizer, kind="causal", template=ContextTemplate("\n"), batch_tokens=batch_tokens
        )
        scores = scorer.score([c for c, _ in held_out], [[r] for _, r in held_out])
        logprob = sum(q[0].sum_logprob for q in scores)
        tokens = sum(q[0].n_tokens for q in scores)
        perplexity = math.exp(-logprob / tokens)
        pair_scores = scorer.score([p["context"] for p in pairs], [[p["correct"], p["incorrect"]] for p in pairs])
        correct = [q[0].loss < q[1].loss for q in pair_scores]
        cells = [accuracy_summary(correct)]
        for kind in kinds:
            chosen = [c for c, p in zip(correct, pairs, strict=True) if kind.split()[0] == p["type"]]
            if " " in kind:  # content words: one column per criterion
                criterion = kind.split()[1].lower()
                chosen = [
                    c
                    for c, p in zip(correct, pairs, strict=True)
                    if kind.split()[0] == p["type"] and p["criterion"] == criterion
                ]
            cells.append(accuracy_summary(chosen))
        params = sum(p.numel() for p in model.parameters()) / 1e6
        measured.append((name, perplexity, [c["accuracy"] for c in cells]))
        text = "".join(
            f"  {100 * c['accuracy']:5.1f} [{100 * c['ci95'][0]:4.1f}, {100 * c['ci95'][1]:4.1f}] n={c['questions']:<4}"
            for c in cells
        )
        print(f"  {name:14} {params:6.1f}M {perplexity:10.1f}{text}")
    if len(measured) >= 3:
        from scipy import stats

        print("\nrank agreement with held-out perplexity (lower perplexity, higher correctness), over models:")
        for column, label in enumerate(["all pairs", *kinds]):
            correctness = [m[2][column] for m in measured]
            negated = [-m[1] for m in measured]
            rho = stats.spearmanr(negated, correctness).statistic
            tau = stats.kendalltau(negated, correctness).statistic
            print(f"  {label:10} Spearman {rho:+.3f}  Kendall {tau:+.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="ground truths (default: every test dialogue)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-question", type=int, default=1)
    parser.add_argument("--sample-out", type=Path, default=None)
    parser.add_argument("--sample-per-type", type=int, default=50)
    parser.add_argument("--pairs-out", type=Path, default=None, help="every pair as JSON lines (import_pairs reads it)")
    parser.add_argument("--lms", type=Path, default=None, help="folder of models from bench/pairs_lms.py")
    parser.add_argument("--batch-tokens", type=int, default=4096)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    items = questions("test", args.limit)
    rules = build_rules(repository_texts())
    pairs, outcomes, seconds = make_pairs(rules, items, seed=args.seed, per_question=args.per_question)
    report_counts(pairs, outcomes, seconds, len(items))
    if args.sample_out:
        write_sample(pairs, args.sample_out, per_type=args.sample_per_type, seed=args.seed)
    if args.pairs_out:
        with args.pairs_out.open("w", encoding="utf-8") as out:
            for pair in pairs:
                record = {k: v for k, v in pair.items() if k != "question"}
                out.write(json.dumps({**record, "review": "pending"}, ensure_ascii=False) + "\n")
    if args.lms:
        score_models(args.lms, pairs, batch_tokens=args.batch_tokens)


if __name__ == "__main__":
    main()
