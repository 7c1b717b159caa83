"""Benchmark: one pool job on one Celery worker process, then the same job on two, side by side.

N DailyDialog questions (the dialogues of test, then validation, then train, with at least four
turns: three of context and the ground truth) are imported twice, as datasets "one-worker" and
"two-workers"; the repository is DailyDialog train (its first --train-lines dialogues) or any file
given with --repository. Both indexes are built once, before the runs. Then the pool job of the
first dataset runs on one worker process and that of the second on two (real `celery worker`
processes, solo pool, sharing the job's shards of --shard-size questions); the script prints each
run's wall time (from the job's message to its end, models loaded inside it), the speed-up, how
many shards each worker ran, and whether the two runs' pools are identical (utterance, text,
source, rank and score of every candidate, and the exclusions recorded).

    .venv/bin/python bench/pools_workers.py [--questions 2000] [--train-lines 11118] [--shard-size 250]
        [--threads 0] [--repository FILE --repository-format lines] [--with-cornell]
        [--synthetic 1000000] [--keep DIR] [--database postgres://.../postgres]

--synthetic N: a repository of N utterances larger than the real text at hand (108,084 distinct
utterances in ../shared/data): each joins as many real sentences as a randomly drawn real utterance
has, every sentence drawn at random (seeded) from the sentences of DailyDialog and the Cornell
sample. Its words and sentences are real, their combinations are not. --keep DIR (SQLite): the
data folder, kept; a later run with the same DIR skips the import and the index build (the encoding
of 1 M utterances takes about 20 minutes on 2 vCPUs) and starts from the database as prepared.

--threads N gives each worker N encoder threads and N OpenMP (FAISS) threads (0: as configured,
every core). SQLite in a temporary data folder unless --database (an admin URL: a fresh database
is made beside it and dropped at the end); kombu's filesystem broker and the file cache, as in
`make run`. Needs ../shared/data (WELLCHOSEN_SHARED_DATA).
"""

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
DAILYDIALOG = SHARED / "dailydialog"
SPLITS = ("test/dialogues_test.txt", "validation/dialogues_validation.txt", "train/dialogues_train.txt")
DATABASE_NAME = "wellchosen_bench_pools_workers"


def questions_file(target: Path, n: int) -> int:
    """The first ``n`` dialogues of four turns or more (one question each), test split first."""
    kept = 0
    with target.open("w", encoding="utf-8") as out:
        for split in SPLITS:
            with (DAILYDIALOG / split).open(encoding="utf-8") as source:
                for line in source:
                    if kept >= n:
                        return kept
                    if len([t for t in line.split("__eou__") if t.strip()]) >= 4:
                        out.write(line)
                        kept += 1
    return kept


def real_utterances() -> list[str]:
    """Every utterance of DailyDialog's three splits and the Cornell sample, in file order."""
    texts = []
    for split in SPLITS:
        for line in (DAILYDIALOG / split).open(encoding="utf-8"):
            texts.extend(t.strip() for t in line.split("__eou__") if t.strip())
    for path in sorted((SHARED / "cornell_PARTIAL").glob("movie_lines*.txt")):
        for line in path.open(encoding="utf-8", errors="replace"):
            fields = line.rstrip("\r\n").split(" +++$+++ ")
            if len(fields) == 5 and fields[4].strip():
                texts.append(fields[4].strip())
    return texts


def synthetic_repository(target: Path, n: int, *, seed: int = 20261127) -> int:
    """``n`` distinct utterances, one per line (see --synthetic); returns the number of real
    sentences they were drawn from."""
    split = re.compile(r"(?<=[.!?])\s+")
    real = [[s for s in split.split(text) if s] for text in real_utterances()]
    sentences = sorted({s for parts in real for s in parts})
    lengths = [len(parts) for parts in real if parts]
    rng, seen = random.Random(seed), set()
    with target.open("w", encoding="utf-8") as out:
        while len(seen) < n:
            text = " ".join(rng.choice(sentences) for _ in range(rng.choice(lengths)))
            if text not in seen:
                seen.add(text)
                out.write(text + "\n")
    return len(sentences)


def head(source: Path, target: Path, lines: int) -> Path:
    with source.open(encoding="utf-8") as src, target.open("w", encoding="utf-8") as out:
        for n, line in enumerate(src):
            if n >= lines:
                break
            out.write(line)
    return target


def start_workers(count: int, *, env: dict, logs: Path) -> list[subprocess.Popen]:
    processes = []
    for i in range(count):
        log = logs / f"worker-{count}-{i}.log"
        command = [
            sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", env["WELLCHOSEN_GPU_QUEUE"],
            "--pool=solo", "--without-gossip", "--without-mingle", "--without-heartbeat",
            "-n", f"bench{count}-{i}@%h", "--loglevel=INFO",
        ]  # fmt: skip
        with log.open("w") as out:
            process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        process.log = log
        processes.append(process)
    deadline = time.monotonic() + 120
    for process in processes:
        while "ready." not in process.log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                stop_workers(processes)
                sys.exit(f"a worker did not start:\n{process.log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
    return processes


def stop_workers(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def run_job(dataset: str, workers: int, *, env: dict, logs: Path) -> tuple[float, dict, Counter]:
    """The dataset's pool job on ``workers`` worker processes: wall seconds, its result, shards per worker."""
    from core.models import Job, JobShard
    from core.services.jobs import job_create
    from retrieval.job_params import BuildPoolsParams

    processes = start_workers(workers, env=env, logs=logs)
    try:
        start = time.perf_counter()
        job = job_create(params=BuildPoolsParams(dataset=dataset, repository="repository", exclude_datasets=[dataset]))
        while not (job := Job.objects.get(pk=job.pk)).is_finished:
            time.sleep(0.2)
        seconds = time.perf_counter() - start
    finally:
        stop_workers(processes)
    if job.status != "succeeded":
        sys.exit(f"the {dataset} job {job.status}: {job.error}")
    pids = {str(p.pid): f"worker {i + 1}" for i, p in enumerate(processes)}
    claims = JobShard.objects.filter(job=job).values_list("worker", flat=True)
    shards = Counter(pids.get(worker.rsplit(":", 1)[-1], worker) for worker in claims)
    return seconds, job.result, shards


def pools(dataset: str) -> dict[int, tuple]:
    """Each question's pool and recorded exclusions, by its line in the questions file."""
    from annotation.models import Candidate
    from retrieval.models import QuestionRetrieval

    found: dict[int, list] = {}
    rows = Candidate.objects.filter(question__dataset__name=dataset, is_ground_truth=False).values_list(
        "question__context__source_line", "utterance_id", "text", "source", "rank", "retrieval_score", "retrieval"
    )
    for line, *candidate in rows:
        found.setdefault(line, []).append(repr(candidate))
    for line, exclusions in QuestionRetrieval.objects.filter(question__dataset__name=dataset).values_list(
        "question__context__source_line", "exclusions"
    ):
        found.setdefault(line, []).append(repr(exclusions))
    return {line: tuple(sorted(items)) for line, items in found.items()}


def prepare(folder: Path, args: argparse.Namespace) -> str:
    """The two datasets, the repository and its indexes; returns what they hold, in words."""
    from django.core.management import call_command

    from annotation.models import Question, Repository
    from annotation.services.dialogue_import import dialogues_import
    from retrieval.services.indexing import indexes_ensure
    from retrieval.services.repository_import import repository_import

    call_command("migrate", verbosity=0)
    kept = questions_file(folder / "questions.txt", args.questions)
    for name in ("one-worker", "two-workers"):
        dialogues_import(path=folder / "questions.txt", fmt="dailydialog", dataset_name=name)
    if args.synthetic:
        source, fmt = folder / "synthetic.txt", "lines"
        sentences = synthetic_repository(source, args.synthetic)
        what = f"{args.synthetic:,} synthetic utterances recombined from {sentences:,} real sentences"
    elif args.repository:
        source, fmt, what = args.repository, args.repository_format, str(args.repository)
    else:
        source = head(DAILYDIALOG / SPLITS[2], folder / "train.txt", args.train_lines)
        fmt, what = "dailydialog", f"DailyDialog train, {args.train_lines:,} dialogues"
    start = time.perf_counter()
    report = repository_import(path=source, name="repository", fmt=fmt, exclude_datasets=["one-worker"])
    if args.with_cornell:
        for lines in sorted((SHARED / "cornell_PARTIAL").glob("movie_lines*.txt")):
            report = repository_import(path=lines, name="repository", fmt="cornell", exclude_datasets=["one-worker"])
        what += " and the Cornell movie-lines sample"
    indexes_ensure(repository=Repository.objects.get(name="repository"))
    setup = time.perf_counter() - start
    questions = Question.objects.filter(dataset__name="one-worker", derived_from__isnull=True).count()
    return (
        f"{questions:,} questions ({kept:,} DailyDialog dialogues), repository of "
        f"{report['repository_size']:,} utterances ({what}): imported and indexed in {setup:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=2000, help="DailyDialog questions (dialogues)")
    parser.add_argument("--train-lines", type=int, default=11118, help="DailyDialog train dialogues as the repository")
    parser.add_argument("--repository", type=Path, help="another repository file instead of DailyDialog train")
    parser.add_argument("--repository-format", default="lines", help="its format: lines, cornell or dailydialog")
    parser.add_argument(
        "--with-cornell", action="store_true", help="add the Cornell movie-lines sample of ../shared/data"
    )
    parser.add_argument("--synthetic", type=int, default=0, help="a repository of N recombined real sentences")
    parser.add_argument("--keep", type=Path, help="SQLite: the data folder, prepared once and reused")
    parser.add_argument("--shard-size", type=int, default=250, help="questions per shard")
    parser.add_argument("--threads", type=int, default=0, help="encoder and OpenMP threads per worker (0: all cores)")
    parser.add_argument("--database", help="PostgreSQL admin URL (default: SQLite)")
    args = parser.parse_args()
    if not DAILYDIALOG.exists():
        sys.exit(f"skipped: needs DailyDialog in {DAILYDIALOG} (see ../shared/data/README.md)")
    if args.keep and args.database:
        sys.exit("--keep works with SQLite only")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="wellchosen-pools-workers-"))
    folder.mkdir(parents=True, exist_ok=True)
    prepared = folder / "prepared.sqlite3"
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "WELLCHOSEN_DATA_DIR": str(folder),
        "WELLCHOSEN_GPU_QUEUE": f"bench-{uuid.uuid4().hex[:8]}",  # the pool job's queue (its kind's is "gpu")
        "WELLCHOSEN_JOB_SHARD_SIZE": str(args.shard_size),
        "WELLCHOSEN_MODEL_CACHE_DIR": os.environ.get("WELLCHOSEN_MODEL_CACHE_DIR", str(ROOT / "var" / "model-cache")),
        "CELERY_BROKER_URL": "filesystem://",
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "DATABASE_URL": f"sqlite:///{folder / 'bench.sqlite3'}",
    }
    if args.database:
        from benchlib import fresh_database

        env["DATABASE_URL"] = fresh_database(args.database, DATABASE_NAME)
    if prepared.exists():
        shutil.copyfile(prepared, folder / "bench.sqlite3")
    os.environ.update(env)
    worker_env = {**os.environ}
    if args.threads:
        worker_env.update({"WELLCHOSEN_ENCODER_THREADS": str(args.threads), "OMP_NUM_THREADS": str(args.threads)})
    import django

    django.setup()
    from django.db import connections

    try:
        if prepared.exists():
            summary = (folder / "prepared.txt").read_text()
        else:
            summary = prepare(folder, args)
            if args.keep:
                connections.close_all()
                shutil.copyfile(folder / "bench.sqlite3", prepared)
                (folder / "prepared.txt").write_text(summary)
        print(
            f"{summary}; shards of {args.shard_size} questions; threads per worker: "
            f"{args.threads or 'all cores'}; database {'PostgreSQL' if args.database else 'SQLite'}"
        )
        logs = folder / "logs"
        shutil.rmtree(logs, ignore_errors=True)
        logs.mkdir()
        seconds = {}
        for workers, dataset in ((1, "one-worker"), (2, "two-workers")):
            seconds[workers], result, shards = run_job(dataset, workers, env=worker_env, logs=logs)
            print(
                f"{workers} worker(s): {seconds[workers]:7.1f} s, {result['built']:,} pools built, "
                f"shards run: {dict(shards)}"
            )
        a, b = pools("one-worker"), pools("two-workers")
        differ = sum(a.get(line) != b.get(line) for line in set(a) | set(b))
        print(
            f"speed-up {seconds[1] / seconds[2]:.2f}x; pools identical: {differ == 0} "
            f"({differ} of {len(a):,} questions differ)"
        )
    finally:
        if args.database:
            from benchlib import drop_database
            from django.db import connections

            connections.close_all()
            drop_database(args.database, DATABASE_NAME)


if __name__ == "__main__":
    main()
