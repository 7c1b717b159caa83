"""Benchmark: can the ground truth be picked without the context? DailyDialog test questions with
pools retrieved (BM25 + embeddings, the product's pool build) from a repository of (a) DailyDialog
train or (b) the Cornell movie-lines sample; each question's test-set choice of 3 false
candidates made (1) at random among the pool, as the build does, and (2) shortcut-aware
(testsets.shortcuts.balance); every context-free baseline of the audit on each, beside chance.
With ``--normalise NAME`` both imports undo the corpora's styles first (core.normalisers).

No annotation runs here: every pool candidate stands for one the human filter rules kept.

    .venv/bin/python bench/shortcuts.py [--repository dailydialog|cornell] [--normalise detokenize]
        [--dialogues 1000] [--train-dialogues 11118] [--work DIR] [--rounds 3] [--seed 0]

Runs on SQLite in ``--work`` (kept: a second run with the same options reuses its pools).
Needs ../shared/data.
"""

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from benchlib import head  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
DAILYDIALOG = DATA / "dailydialog"
CORNELL = DATA / "cornell_PARTIAL" / "movie_lines.PARTIAL_m0-m58_truncated_CRLF.txt"
FALSE_PER_QUESTION = 3


def build_pools(args, folder: Path) -> None:
    from django.core.management import call_command

    from annotation.models import Dataset
    from annotation.services.dialogue_import import dialogues_import
    from retrieval.services.pool_choice import PoolSettings
    from retrieval.services.pools import pools_build
    from retrieval.services.repository_import import repository_import

    call_command("migrate", verbosity=0)
    built = folder / "pools.json"
    wanted = {"repository": args.repository, "normalise": args.normalise, "match_surface": args.match_surface}
    if Dataset.objects.filter(name="dd-test", questions__candidates__is_ground_truth=False).exists():
        recorded = json.loads(built.read_text()) if built.exists() else {}
        if recorded != wanted:
            sys.exit(f"{folder} holds pools built with {recorded or 'other options'}, not {wanted}: use another --work")
        print("pools: reused from", folder)
        return
    normalise = {"normaliser": args.normalise} if args.normalise else {}
    test = head(DAILYDIALOG / "test" / "dialogues_test.txt", folder / "dd-test.txt", args.dialogues)
    report = dialogues_import(path=test, fmt="dailydialog", dataset_name="dd-test", **normalise)
    print("dialogues:", {k: v for k, v in report.items() if k in ("questions", "normaliser", "texts_changed")})
    if args.repository == "dailydialog":
        source = head(DAILYDIALOG / "train" / "dialogues_train.txt", folder / "dd-train.txt", args.train_dialogues)
        fmt = "dailydialog"
    else:
        source, fmt = CORNELL, "cornell"
    report = repository_import(path=source, name="repo", fmt=fmt, exclude_datasets=["dd-test"], **normalise)
    print("repository:", {k: v for k, v in report.items() if k in ("inserted", "normaliser", "texts_changed")})
    start = time.perf_counter()
    pools_build(
        dataset_name="dd-test",
        repository_name="repo",
        settings=PoolSettings(lexical=args.lexical, dense=args.dense, match_surface=args.match_surface),
        exclude_datasets=["dd-test"],
    )
    print(f"pools built in {time.perf_counter() - start:.0f} s")
    built.write_text(json.dumps(wanted))


def choice_pools():
    from annotation.models import Candidate
    from testsets.shortcuts.balance import ChoicePool

    by_question: dict[int, dict] = {}
    rows = (
        Candidate.objects.filter(question__dataset__name="dd-test", question__derived_from__isnull=True)
        .order_by("question_id", "source", "rank", "id")
        .values_list("question_id", "id", "text", "is_ground_truth")
    )
    for question_id, candidate_id, text, is_ground_truth in rows:
        entry = by_question.setdefault(question_id, {"gt": None, "ids": [], "texts": []})
        if is_ground_truth:
            entry["gt"] = text
        else:
            entry["ids"].append(candidate_id)
            entry["texts"].append(text)
    return [
        ChoicePool(q, e["gt"], tuple(e["ids"]), tuple(e["texts"]))
        for q, e in by_question.items()
        if e["gt"] is not None and len(e["ids"]) >= FALSE_PER_QUESTION
    ]


def audit(pools, chosen: dict[int, tuple[int, ...]], seed: int) -> dict:
    """The audit of each question's ground truth and its chosen false candidates (ground truth at
    a seeded random place, as a test set shuffles them)."""
    from testsets.shortcuts.audit import shortcut_audit_compute
    from testsets.shortcuts.baselines import AuditOptions
    from testsets.shortcuts.pools import Pool

    audited = []
    for pool in pools:
        if pool.question_id not in chosen:
            continue
        texts = dict(zip(pool.false_ids, pool.false_texts, strict=True))
        candidates = [pool.ground_truth, *(texts[i] for i in chosen[pool.question_id])]
        order = list(range(len(candidates)))
        random.Random(f"{seed}:{pool.question_id}:order").shuffle(order)
        audited.append(Pool(pool.question_id, tuple(candidates[i] for i in order), order.index(0)))
    return shortcut_audit_compute(audited, AuditOptions(seed=seed))


def summary(name: str, result: dict, survivors: int, total: int) -> str:
    rows = [r for r in result["baselines"] if "accuracy" in r]
    best = max(rows, key=lambda r: r["accuracy"])
    cells = "  ".join(f"{r['name']} {100 * r['accuracy']:.1f}" for r in rows)
    return (
        f"{name:<22} questions {survivors}/{total}  chance {100 * result['chance']:.1f} %  "
        f"best {best['name']} {100 * best['accuracy']:.1f} % (CI {100 * best['ci95'][0]:.1f}-"
        f"{100 * best['ci95'][1]:.1f})  [{cells}]"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repository", choices=["dailydialog", "cornell"], default="dailydialog")
    parser.add_argument("--normalise", default="", help="the imports' normaliser (default: none)")
    parser.add_argument("--match-surface", action="store_true", help="pools prefer hits like the ground truth")
    parser.add_argument("--dialogues", type=int, default=1000, help="DailyDialog test dialogues")
    parser.add_argument("--train-dialogues", type=int, default=11118, help="DailyDialog train dialogues (repository)")
    parser.add_argument("--lexical", type=int, default=5)
    parser.add_argument("--dense", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="adversarial filtering rounds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", action="store_true", help="also the classifier's top features")
    parser.add_argument("--work", type=Path, help="the data folder (default: a new temporary one)")
    args = parser.parse_args()
    if not DAILYDIALOG.exists() or (args.repository == "cornell" and not CORNELL.exists()):
        sys.exit(f"needs DailyDialog (and the Cornell sample) in {DATA} (see ../shared/data/README.md)")
    import tempfile

    folder = args.work or Path(tempfile.mkdtemp(prefix="wellchosen-shortcuts-"))
    folder.mkdir(parents=True, exist_ok=True)
    os.environ.update({"DJANGO_SETTINGS_MODULE": "config.settings.local", "WELLCHOSEN_DATA_DIR": str(folder)})
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    build_pools(args, folder)
    from testsets.shortcuts.balance import BalanceOptions, balanced_choice

    pools = choice_pools()
    total = len(pools)
    rng = random.Random(args.seed)
    at_random = {p.question_id: tuple(rng.sample(p.false_ids, FALSE_PER_QUESTION)) for p in pools}
    start = time.perf_counter()
    options = BalanceOptions(rounds=args.rounds, seed=args.seed)
    balanced = balanced_choice(pools, k=FALSE_PER_QUESTION, options=options)
    seconds = time.perf_counter() - start
    kept = {q: c for q, c in balanced.chosen.items()}
    balanced_only = {q: c for q, c in kept.items() if q not in balanced.unbalanced_ids}
    print(
        f"repository {args.repository}, normaliser {args.normalise or 'none'}, "
        f"pools {'matched to the ground truth' if args.match_surface else 'by relevance'}; {total} questions"
    )
    print(summary("random choice", audit(pools, at_random, args.seed), total, total))
    print(summary("shortcut-aware", audit(pools, kept, args.seed), len(kept), total))
    print(summary("  unbalanced dropped", audit(pools, balanced_only, args.seed), len(balanced_only), total))
    print(f"balancing: {balanced.report(options)} in {seconds:.1f} s")
    if args.verbose:
        for name, chosen in (("random", at_random), ("shortcut-aware", kept)):
            rows = {r["name"]: r for r in audit(pools, chosen, args.seed)["baselines"]}
            print(name, "classifier top features:", rows["surface_classifier"].get("top_features"))


if __name__ == "__main__":
    main()
