"""Benchmark: the curation core (import, filter preview, build, export) on a 100,000-question test set.

Writes a synthetic test set in Sato et al.'s released format (--questions lines of 3 context turns,
a ground truth and 3 false candidates, and the aligned human_scores.jsonl with 5 scores per
response: 2 M scores at 100 k questions), then runs the four management commands one after the
other, each in its own process, on a fresh database:

    import_testset → filter_preview --json → build_testset → export_testset (TSV + JSONL + CSV)

side by side with the code of another commit (--baseline, default the commit before the
set-based curation core; its files from `git archive`, run the same way), step by step in
turns. Prints each step's seconds (the command alone, not Django's start) and the process's peak
RSS, then checks that both codes give the same preview, the same test set (questions kept, counts)
and the same exported bytes.

    .venv/bin/python bench/curation.py --questions 20000
    .venv/bin/python bench/curation.py --database postgres://postgres@127.0.0.1:5432/test_curate

--runs N repeats every step N times (fresh databases each time) and reports each step's median
with its range. The machine (CPU model, cores, load) and PostgreSQL's version and the settings a
bulk load depends on are printed first, and the load again at the end.

With --database, two databases named after it (NAME_bench_new, NAME_bench_old) are created and
dropped; without it, SQLite files in a temporary folder. --profile writes a cProfile of each step
of the current code (STEP.prof in --work) and prints its top functions.
"""

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "149438d"  # main before the set-based curation core
STEPS = ("import", "preview", "build", "export")
DATASET, TESTSET = "bench-curation", "bench-curation"

WORDS = [
    a + b
    for a in ("ba", "ko", "mi", "tu", "re", "sa", "no", "le", "fi", "da", "gu", "pe", "zo", "wi", "ha", "ne")
    for b in ("n", "t", "la", "ro", "mi", "ks", "de", "pa", "r", "so", "ve", "l", "go", "ti", "m", "")
]


# ---------------------------------------------------------------------------------------------
# The synthetic released-format files


def sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(4, 14))
    return " ".join(words).capitalize() + rng.choice(".?!")


def scores_of(rng: random.Random, *, ground_truth: bool) -> list[int]:
    """Five scores: ground truths mostly appropriate (some not), false candidates mostly not (some
    acceptable, a few ungrammatical), so that about half the questions survive the default rules."""
    if ground_truth:
        weights = (1, 2, 4, 8, 30, 55) if rng.random() > 0.1 else (10, 20, 30, 25, 10, 5)
    else:
        kind = rng.random()
        if kind < 0.06:
            weights = (60, 20, 10, 5, 3, 2)  # ungrammatical
        elif kind < 0.18:
            weights = (3, 7, 20, 30, 25, 15)  # acceptable
        else:
            weights = (10, 40, 30, 12, 5, 3)
    return rng.choices(range(6), weights=weights, k=5)


def write_testset(folder: Path, questions: int, *, false: int = 3, seed: int = 0) -> tuple[Path, Path]:
    rng = random.Random(seed)
    tsv, scores = folder / "bench.tsv", folder / "bench.human_scores.jsonl"
    with open(tsv, "w", encoding="utf-8") as t, open(scores, "w", encoding="utf-8") as s:
        for _ in range(questions):
            texts = [sentence(rng) for _ in range(3)]
            responses: list[str] = []
            while len(responses) < 1 + false:
                text = sentence(rng)
                if text.lower() not in {r.lower() for r in responses}:
                    responses.append(text)
            t.write("\t".join(texts + responses) + "\n")
            s.write(json.dumps([scores_of(rng, ground_truth=i == 0) for i in range(1 + false)]) + "\n")
    return tsv, scores


# ---------------------------------------------------------------------------------------------
# One step of one code, in its own process (--worker)


def worker(args) -> None:
    code = Path(args.code).resolve()
    sys.path.insert(0, str(code))
    os.chdir(code)
    work = Path(args.work)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DJANGO_DEBUG": "0",
            "DATABASE_URL": args.database,
            "WELLCHOSEN_DATA_DIR": str(work / f"data-{args.label}"),
        }
    )
    import django

    django.setup()
    from django.core.management import call_command

    out = work / f"{args.label}-{args.worker}.out"
    commands = {
        "migrate": ("migrate", "--verbosity", "0"),
        "import": ("import_testset", str(work / "bench.tsv"), "--scores", str(work / "bench.human_scores.jsonl"))
        + ("--dataset", DATASET),
        "preview": ("filter_preview", "--dataset", DATASET, "--json"),
        "build": ("build_testset", "--dataset", DATASET, "--name", TESTSET),
        "export": ("export_testset", TESTSET, "--out", str(work / f"export-{args.label}")),
    }
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
    with open(out, "w", encoding="utf-8") as handle:
        start = time.perf_counter()
        if profiler:
            profiler.enable()
        call_command(*commands[args.worker], stdout=handle)
        if profiler:
            profiler.disable()
        seconds = time.perf_counter() - start
    if profiler:
        profiler.dump_stats(work / f"{args.label}-{args.worker}.prof")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "peak_rss": peak}))


def run_step(step: str, *, label: str, code: Path, database: str, work: Path, profile: bool) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", step, "--label", label]
    command += ["--code", str(code), "--database", database, "--work", str(work)]
    command += ["--profile"] if profile else []
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{label} {step} failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# Side by side


def outputs(work: Path, label: str) -> dict:
    """What each step produced, for the comparison of the two codes."""
    result = {
        "preview": json.loads((work / f"{label}-preview.out").read_text()),
        "build": json.loads((work / f"{label}-build.out").read_text()),
        "files": {},
    }
    result["build"].pop("testset_id", None)
    for path in sorted((work / f"export-{label}").iterdir()):
        if path.name.endswith(".manifest.json"):
            manifest = json.loads(path.read_text())
            for key in ("created_at", "software"):
                manifest.pop(key, None)
            result["manifest"] = manifest
        else:
            result["files"][path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return result


def compare(new: dict, old: dict) -> list[str]:
    problems = []
    for key in ("preview", "build", "manifest"):
        if new[key] != old[key]:
            differing = sorted(k for k in set(new[key]) | set(old[key]) if new[key].get(k) != old[key].get(k))
            problems.append(f"{key} differs in {', '.join(differing)}")
    for name in sorted(set(new["files"]) | set(old["files"])):
        if new["files"].get(name) != old["files"].get(name):
            problems.append(f"{name}: sha256 {new['files'].get(name)} (new) != {old['files'].get(name)} (old)")
    return problems


def databases(args, work: Path, labels: list[str]) -> dict[str, str]:
    if not args.database:
        for label in labels:
            for path in work.glob(f"{label}.sqlite3*"):
                path.unlink()
        return {label: f"sqlite:///{work / f'{label}.sqlite3'}" for label in labels}
    sys.path.insert(0, str(ROOT / "bench"))
    from benchlib import fresh_database

    return {label: fresh_database(admin_url(args.database), bench_database(args.database, label)) for label in labels}


def admin_url(url: str) -> str:
    """The server's maintenance database, from which the bench's databases are created and dropped."""
    return url.rsplit("/", 1)[0] + "/postgres"


def bench_database(url: str, label: str) -> str:
    return f"{url.rsplit('/', 1)[1]}_bench_{label}"


def print_profile(path: Path, lines: int = 25) -> None:
    import pstats

    print(f"--- {path.name}")
    pstats.Stats(str(path)).sort_stats("cumulative").print_stats(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument(
        "--false",
        type=int,
        default=3,
        help="false candidates per line (default 3; with 6 or more, some questions are derived, §3.2)",
    )
    parser.add_argument("--database", default="", help="a PostgreSQL URL (default: SQLite files)")
    parser.add_argument("--baseline", default=BASELINE, help=f"the commit to compare with (default {BASELINE})")
    parser.add_argument("--no-baseline", action="store_true", help="run the current code only")
    parser.add_argument("--profile", action="store_true", help="cProfile each step of the current code")
    parser.add_argument("--until", choices=STEPS, default=STEPS[-1], help="run the steps up to this one only")
    parser.add_argument("--runs", type=int, default=1, help="repeat every step this many times; medians reported")
    parser.add_argument("--work", type=Path, help="folder for the files (default: a temporary one, removed)")
    parser.add_argument("--worker", choices=("migrate", *STEPS), help=argparse.SUPPRESS)
    parser.add_argument("--label", help=argparse.SUPPRESS)
    parser.add_argument("--code", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    sys.path.insert(0, str(ROOT / "bench"))
    from benchlib import load_average, machine_facts, python_speed

    for line in machine_facts(admin_url(args.database) if args.database else ""):
        print(line)
    work = args.work or Path(tempfile.mkdtemp(prefix="wellchosen-bench-curation-"))
    work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    tsv, scores = write_testset(work, args.questions, false=args.false)
    print(
        f"test set: {args.questions:,} questions × (ground truth + {args.false} false) × 5 scores, "
        f"{(tsv.stat().st_size + scores.stat().st_size) / 1e6:.0f} MB, written in {time.perf_counter() - start:.1f} s"
    )
    codes = {"new": ROOT}
    if not args.no_baseline:
        baseline = work / "baseline"
        if not baseline.exists():  # the commit's files, as `git archive` gives them
            baseline.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.baseline], check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(baseline)], input=archive, check=True)
        codes["old"] = baseline
    print(f"database: {'PostgreSQL' if args.database else 'SQLite'}; codes: new = {ROOT}, old = {args.baseline}")
    steps = STEPS[: STEPS.index(args.until) + 1]
    runs: list[dict[str, dict[str, dict]]] = []
    for run in range(args.runs):
        # A shared VM's speed can change within minutes: each run's figures sit beside it.
        speed = python_speed()
        print(f"  run {run + 1}: load average {load_average()}; one core's Python workload {speed}", flush=True)
        urls = databases(args, work, list(codes))
        for label, code in codes.items():
            run_step("migrate", label=label, code=code, database=urls[label], work=work, profile=False)
        results: dict[str, dict[str, dict]] = {label: {} for label in codes}
        for step in steps:
            for label, code in codes.items():
                profile = args.profile and label == "new" and run == 0
                results[label][step] = run_step(
                    step, label=label, code=code, database=urls[label], work=work, profile=profile
                )
                r = results[label][step]
                print(
                    f"  run {run + 1} {label:<4} {step:<8} {r['seconds']:8.1f} s  {r['peak_rss'] / 1e6:6.0f} MB",
                    flush=True,
                )
        runs.append(results)
    print_table(runs, codes, steps)
    if steps == STEPS:
        report(work, codes)
    print(f"load average at the end: {load_average()} (1/5/15 min)")
    if args.profile:
        for step in steps:
            print_profile(work / f"new-{step}.prof")
    if args.database:
        from benchlib import drop_database

        for label in codes:
            drop_database(admin_url(args.database), bench_database(args.database, label))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


def print_table(runs: list[dict], codes: dict, steps: tuple[str, ...]) -> None:
    """Each step's median over the runs (seconds; the range when there are several) and peak RSS."""
    import statistics

    def cell(values: list[float]) -> str:
        median = f"{statistics.median(values):.1f}"
        return median if len(values) == 1 else f"{median} ({min(values):.1f}-{max(values):.1f})"

    rows = [
        (step, [[r[c][step]["seconds"] for r in runs] for c in codes], runs[-1]["new"][step]["peak_rss"])
        for step in steps
    ]
    if steps == STEPS:
        later = STEPS[1:]
        seconds = [[sum(r[c][s]["seconds"] for s in later) for r in runs] for c in codes]
        rows.append(("preview + build + export", seconds, max(runs[-1]["new"][s]["peak_rss"] for s in later)))
    print(
        f"\nmedian of {len(runs)} run{'s' if len(runs) > 1 else ''}, seconds (range); the new code's peak RSS, last run"
    )
    print(f"{'step':<26}" + "".join(f"{label + ' s':>22}" for label in codes) + f"{'MB':>8}")
    for name, seconds, rss in rows:
        print(f"{name:<26}" + "".join(f"{cell(v):>22}" for v in seconds) + f"{rss / 1e6:>8.0f}")


def report(work: Path, codes: dict) -> None:
    new = outputs(work, "new")
    print(
        f"\nkept: {new['build']['questions']:,} questions ({new['build']['derived_questions']:,} derived), "
        f"{new['build']['candidates']:,} candidates, {new['build']['scores']:,} scores"
    )
    if "old" in codes:
        problems = compare(new, outputs(work, "old"))
        print("same preview, test set and exported bytes as the old code" if not problems else "DIFFERENCES:")
        for problem in problems:
            print(f"  {problem}")


if __name__ == "__main__":
    main()
