"""The pair fluency check (pairs.fluency) on a hand-labelled sample of DailyDialog pairs: how many
garbled edits each measure catches and how many fluent ones it holds back, and whether garbled
pairs are still the easiest for the systems once the check has run.

The sample: ``bench/pairs.py --sample-out FILE --sample-per-type 80`` (seed 0) draws 80 pairs per
type from the pairs of every DailyDialog test question; bench/pair_fluency_labels.tsv holds one
reader's label for each (garbled: no acceptable English sentence; fluent: however odd its
meaning), keyed by question, type and a hash of the incorrect response, so no dialogue text is
stored here. This bench rebuilds the pairs with bench/pairs.py's rules and finds each labelled one.

    .venv/bin/python bench/pairs_lms.py --out /tmp/pairs-lms --only gpt2-6l
    .venv/bin/python bench/pair_fluency.py --lm /tmp/pairs-lms/gpt2-6l [--systems /tmp/pairs-lms]

Measures (nats; from pairs.fluency.Fluency): the mean loss increase per token of the whole
response (the check's default), the mean increase on the shared continuation after the edit, and
the total log-probability lost from the edit on. For each: what the default bar holds, and the
best catch at no more than 5 % of the fluent pairs held back (the bar chosen on this sample, so an
upper bound).
"""

import argparse
import hashlib
import importlib.util
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LABELS = Path(__file__).resolve().parent / "pair_fluency_labels.tsv"
MEASURES = ("increase", "continuation_increase", "total_increase")  # the causal reference's


def bench_pairs_module():
    # bench/pairs.py is a script whose name is the app's: load it under another name
    spec = importlib.util.spec_from_file_location("bench_pairs", Path(__file__).resolve().parent / "pairs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_labels(path: Path) -> dict[tuple[int, str, str, str], str]:
    labels = {}
    with path.open(encoding="utf-8") as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle if line.strip() and not line.startswith("#")]
    for question, kind, criterion, digest, label in rows[1:]:
        labels[(int(question), kind, criterion, digest)] = label
    return labels


def labelled_pairs(labels) -> list[dict]:
    """The labelled pairs the rules still make; the labels of those they no longer make are
    reported (a rule that stopped making garbled edits shows here)."""
    bench = bench_pairs_module()
    rules = bench.build_rules(bench.repository_texts())
    pairs, _, _ = bench.make_pairs(rules, bench.questions("test"), seed=0, per_question=1)
    found, made = [], set()
    for pair in pairs:
        digest = hashlib.sha1(pair["incorrect"].encode("utf-8")).hexdigest()[:16]
        key = (pair["question"], pair["type"], pair["criterion"] or "-", digest)
        if key in labels and key not in made:
            made.add(key)
            found.append({**pair, "label": labels[key]})
    gone = Counter((key[1], label) for key, label in labels.items() if key not in made)
    print(
        f"labelled pairs no longer made by the rules: {sum(gone.values())}"
        + "".join(f"; {kind} {label} {n}" for (kind, label), n in sorted(gone.items()))
    )
    return found


def mlm_measures(pairs: list[dict], folder: str) -> tuple[str, ...]:
    """Pseudo-log-likelihood (Salazar et al., 2020) of each response alone under a masked LM: each
    word masked in turn, its log-probability summed. A masked LM reads both sides of an edit, so a
    garbled edit also lowers the words around it. Adds the total and per-word PLL lost; returns
    their names."""
    from negatives.manipulation import Manipulator
    from negatives.manipulation_data import Item, ManipulationSettings
    from negatives.mlm import MaskedLM

    manipulator = Manipulator(MaskedLM.load(folder, setting="--mlm", device="cpu"), ManipulationSettings(min_words=1))
    texts = [text for p in pairs for text in (p["correct"], p["incorrect"])]
    encoded = [manipulator.encode(Item(key=0, context=[], response=text)) for text in texts]
    if any(isinstance(e, str) for e in encoded):
        sys.exit("a response could not be scored by the masked LM (too long)")
    scored = manipulator.score(encoded)
    for k, pair in enumerate(pairs):
        correct = [w.logp_alone for w in scored[2 * k]]
        incorrect = [w.logp_alone for w in scored[2 * k + 1]]
        pair["pll_total_increase"] = sum(correct) - sum(incorrect)
        pair["pll_mean_increase"] = sum(correct) / len(correct) - sum(incorrect) / len(incorrect)
    return ("pll_total_increase", "pll_mean_increase")


def catch_table(pairs: list[dict], measures: tuple[str, ...], default_bar: float) -> None:
    garbled = [p for p in pairs if p["label"] == "garbled"]
    fluent = [p for p in pairs if p["label"] == "fluent"]
    print(f"\n{len(pairs)} labelled pairs: {len(garbled)} garbled, {len(fluent)} fluent")
    for kind in sorted({p["type"] for p in pairs}):
        n = sum(p["type"] == kind for p in pairs)
        g = sum(p["type"] == kind and p["label"] == "garbled" for p in pairs)
        print(f"  {kind:9} {n} pairs, {g} garbled")
    print(f"\n{'measure':24} {'garbled: min / median':>22} {'fluent: median / max':>22}  at bar {default_bar}")
    for measure in measures:
        g = sorted(p[measure] for p in garbled)
        f = sorted(p[measure] for p in fluent)
        held_g = sum(v > default_bar for v in g)
        held_f = sum(v > default_bar for v in f)
        # the lowest bar that holds back at most 5 % of the fluent pairs, and what it catches
        allowed = int(0.05 * len(f))
        bar = f[-1 - allowed] if len(f) > allowed else f[-1]
        caught = sum(v > bar for v in g)
        print(
            f"{measure:24} {g[0]:+9.2f} / {g[len(g) // 2]:+9.2f}  {f[len(f) // 2]:+9.2f} / {f[-1]:+9.2f}"
            f"  holds {held_g}/{len(g)} garbled, {held_f}/{len(f)} fluent;"
            f" at <= 5 % fluent (bar {bar:+.2f}): {caught}/{len(g)} garbled"
        )
    print("\nper pair, garbled (measure values):")
    for p in garbled:
        values = "  ".join(f"{p[m]:+.2f}" for m in measures)
        print(f"  {p['type']:9} {values}   {p['incorrect'][:90]}")


def correctness(pairs: list[dict], folder: Path, default_bar: float) -> None:
    """Each system's correctness on the garbled and the fluent pairs, and on what the check keeps."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from evaluation.metrics.accuracy import accuracy_summary
    from evaluation.scoring import ContextTemplate
    from evaluation.scoring.lm import LMScorer

    print(f"\npair correctness (systems in {folder}); kept: pairs the default check does not hold back")
    for name in sorted(p.name for p in folder.iterdir() if (p / "config.json").exists()):
        tokenizer = AutoTokenizer.from_pretrained(folder / name)
        model = AutoModelForCausalLM.from_pretrained(folder / name).eval()
        scorer = LMScorer(model=model, tokenizer=tokenizer, kind="causal", template=ContextTemplate("\n"))
        scores = scorer.score([p["context"] for p in pairs], [[p["correct"], p["incorrect"]] for p in pairs])
        right = [q[0].loss < q[1].loss for q in scores]
        groups = {
            "garbled": [r for r, p in zip(right, pairs, strict=True) if p["label"] == "garbled"],
            "fluent": [r for r, p in zip(right, pairs, strict=True) if p["label"] == "fluent"],
            "all": right,
            "kept": [r for r, p in zip(right, pairs, strict=True) if p["increase"] <= default_bar],
        }
        cells = []
        for label, values in groups.items():
            summary = accuracy_summary(values)
            cells.append(f"{label} {sum(values)}/{len(values)} = {100 * summary['accuracy']:.1f} %")
        print(f"  {name:12} " + "; ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lm", required=True, help="the reference causal LM (a folder or a Hugging Face id)")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--mlm", default=None, help="also a masked LM's pseudo-log-likelihood (a folder)")
    parser.add_argument("--systems", type=Path, default=None, help="folder of causal LMs to score the pairs")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from pairs.fluency import MAX_LOSS_INCREASE, ReferenceLM

    pairs = labelled_pairs(read_labels(args.labels))
    reference = ReferenceLM(args.lm, device=args.device)
    print(f"reference LM: {reference.version}")
    for pair, fluency in zip(pairs, reference.fluency([(p["correct"], p["incorrect"]) for p in pairs]), strict=True):
        pair.update(
            increase=fluency.increase,
            continuation_increase=fluency.continuation_increase,
            total_increase=fluency.total_increase,
        )
    measures = MEASURES + (mlm_measures(pairs, args.mlm) if args.mlm else ())
    catch_table(pairs, measures, MAX_LOSS_INCREASE)
    if args.systems:
        correctness(pairs, args.systems, MAX_LOSS_INCREASE)


if __name__ == "__main__":
    main()
