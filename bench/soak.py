"""Soak: `make run`'s stack under load for --minutes, with everything that broke the SQLite default.

Starts ``python -m config.stack run`` on a new WELLCHOSEN_DATA_DIR in a temporary folder with
DATABASE_URL, CELERY_BROKER_URL and REDIS_CACHE_URL unset (so PostgreSQL and Redis are embedded, as
`make run` has them), with the demo data. Once it answers, this process prepares the load through the
services with the stack's addresses (soak_data: a dataset of DailyDialog train dialogues open for
annotation, two DailyDialog datasets to build pools for, the Cornell sample as their repository, the
annotator accounts) and writes a --repository-lines file from the real corpora of ../shared/data
(DailyDialog train and the Cornell sample, each repeat varied; made-up sentences without them).
Then, at once and for --minutes (soak_clients), each starting its next as the last one ends:

- the demo researcher uploads that file on the admin's import page (a job on a `default` worker)
  and follows the job as its page does (status.json);
- a command-line import, ``config.stack manage import_dialogues`` of the DailyDialog train file
  into a new dataset;
- a pool job from the dataset pools page (the `gpu` worker; the first builds the repository's search
  indexes), for the two prepared datasets, then for those the command-line imports made;
- a test-set build from the build page (of load_demo's annotated dataset, a `default` worker);
- the researcher's other tab: the dataset's workspace and the job list every few seconds;
- --annotators simulated annotators (aiohttp sessions, logged in on the login page): GET
  /annotate/, read for --think seconds on average, POST the unit form.

Jobs still running at the end are waited for. Then: answers by status, page times, jobs that failed
(every job of the database, the demo's too), units and scores the clients saw acknowledged against
what is stored, duplicate (candidate, annotator) scores, the worker, beat and web-server processes
at the start and the end, and the logs' tracebacks. Target: 0 5xx / 0 failed jobs / 0 lost or
duplicated scores / 0 worker restarts.

    .venv/bin/python bench/soak.py [--minutes 10] [--repository-lines 300000] [--annotators 20]
"""

import argparse
import asyncio
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))

import soak_data  # noqa: E402
from benchlib import free_port  # noqa: E402
from import_repository import source_utterances, write_corpus  # noqa: E402
from soak_clients import Browser, Record, annotator, browsing, commands_in_turn, jobs_in_turn  # noqa: E402

READY_HANG_GUARD_S = 1800  # the first start builds the demo pools; a busy machine is slow
STOP_HANG_GUARD_S = 300
SHARED = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
STACK_VARIABLES = ("DATABASE_URL", "CELERY_BROKER_URL", "REDIS_CACHE_URL", "DJANGO_SETTINGS_MODULE")
LOG_PATTERNS = {
    "tracebacks": "Traceback (most recent call last)",
    "Unrecoverable error": "Unrecoverable error",
    "WorkerLostError": "WorkerLostError",
    "database is locked": "database is locked",
}


def machine() -> str:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    memory = psutil.virtual_memory().total / 2**30
    return f"{os.cpu_count()} CPUs ({model}), {memory:.0f} GiB, {platform.system()} {platform.release()}"


def load() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def stack_start(work: Path, env: dict, port: int) -> subprocess.Popen:
    """`make run` with the demo data (the test-set builds use its annotated dataset)."""
    with (work / "stack.out").open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "config.stack", "run", "--port", str(port)],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def stack_wait(process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + READY_HANG_GUARD_S
    while "WellChosen is running at" not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the stack did not start; {log}:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(1)


def stack_stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)  # the launcher stops its children, then the servers
        try:
            process.wait(timeout=STOP_HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def django_setup(work: Path) -> None:
    """This process on the stack's servers: the addresses config.stack gives its children."""
    import django

    from config.engines import EmbeddedPostgres, EmbeddedRedis
    from config.stack import BROKER_DB, CACHE_DB, DATABASE_NAME

    postgres = EmbeddedPostgres(work / "postgres", log=work / "log" / "postgres.log")
    redis = EmbeddedRedis(work / "redis", log=work / "log" / "redis.log")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        WELLCHOSEN_DATA_DIR=str(work),
        DATABASE_URL=postgres.url(DATABASE_NAME),
        CELERY_BROKER_URL=redis.address.broker_url(BROKER_DB),
        REDIS_CACHE_URL=redis.address.url(CACHE_DB),
    )
    django.setup()


def stack_processes(pid: int) -> dict[str, set[int]]:
    """The launcher's workers, beat and web server (runserver and its reloaded child) by name."""
    found: dict[str, set[int]] = {}
    for process in psutil.Process(pid).children(recursive=True):
        try:
            command = process.cmdline()
        except psutil.NoSuchProcess:
            continue
        if "celery" in command and "worker" in command:
            name = "worker " + command[command.index("-n") + 1].split("@")[0]
        elif "celery" in command and "beat" in command:
            name = "beat"
        elif "runserver" in command:
            name = "web server"
        else:
            continue
        found.setdefault(name, set()).add(process.pid)
    return found


def repository_file(path: Path, lines: int) -> str:
    texts = source_utterances(SHARED) if (SHARED / "dailydialog").is_dir() else []
    source = "DailyDialog train and the Cornell sample"
    if not texts:
        texts = [f"Sentence {i} of a film about the {w} ." for i, w in enumerate(["sea", "city", "war"] * 2000)]
        source = "made-up sentences"
    write_corpus(path, lines, texts)
    return f"{lines:,} lines from {source} ({len(texts):,} texts, repeats varied)"


def logs_scan(folder: Path) -> dict[str, dict[str, int]]:
    counts = {}
    for log in sorted(folder.glob("*.log")):
        text = log.read_text(errors="replace")
        counts[log.name] = {name: text.count(pattern) for name, pattern in LOG_PATTERNS.items()}
        if log.name == "postgres.log":
            counts[log.name] = {level: len(re.findall(rf"\b{level}:", text)) for level in ("ERROR", "FATAL", "PANIC")}
    return counts


async def soak(args, *, base: str, work: Path, env: dict, prepared: dict, corpus: Path, record: Record) -> float:
    """The load of the docstring for args.minutes; the seconds until the last job ended."""
    password = dict(
        line.split(":", 1) for line in (work / "demo-credentials.txt").read_text().splitlines() if ":" in line
    )["researcher"]
    researcher, tab = Browser(base, record), Browser(base, record)
    people = [Browser(base, record) for _ in range(args.annotators)]
    await asyncio.gather(
        researcher.login("researcher", password),
        tab.login("researcher", password),
        *(person.login(f"soak{i}", args.password) for i, person in enumerate(people)),
    )
    testset_dataset = await asyncio.to_thread(soak_data.dataset_pk, soak_data.TESTSET_DATASET)
    imported_by_command: list[str] = []

    async def repository_import(n: int):
        return await researcher.form_submit(
            "repository import page", "/admin/annotation/repository/import/", "name",
            {"name": f"soak-import-{n}", "format": "lines"}, files={"file": corpus},
        )  # fmt: skip

    async def pools(n: int):
        targets = soak_data.POOL_DATASETS + imported_by_command
        if n > len(targets):
            return False
        dataset = await asyncio.to_thread(soak_data.dataset_pk, targets[n - 1])
        return await researcher.form_submit(
            "dataset pools page", f"/admin/annotation/dataset/{dataset}/pools/", "repository",
            {"repository": soak_data.POOL_REPOSITORY},
        )  # fmt: skip

    async def testset(n: int):
        return await researcher.form_submit(
            "test-set build page", f"/admin/annotation/dataset/{testset_dataset}/build/", "false_per_question",
            {"name": f"soak-testset-{n}"},
        )  # fmt: skip

    def dialogues(n: int) -> tuple[list[str], str]:
        name = f"soak-cli-{n}"
        return ["import_dialogues", str(prepared["files"]["train"]), "--format", "dailydialog", "--dataset", name], name

    record.started = time.monotonic()
    until = record.started + args.minutes * 60
    await asyncio.gather(
        jobs_in_turn(researcher, "import_repository", until, repository_import),
        jobs_in_turn(researcher, "build_pools", until, pools),
        jobs_in_turn(researcher, "build_testset", until, testset),
        commands_in_turn(record, until=until, env=env, root=ROOT, command=dialogues, done=imported_by_command),
        browsing(tab, until=until, dataset=soak_data.ANNOTATION_DATASET),
        *(annotator(person, think=args.think, until=until, seed=i) for i, person in enumerate(people)),
    )
    for browser in (researcher, tab, *people):
        await browser.close()
    return time.monotonic() - record.started


def percentile(values: list[float], q: float) -> str:
    return f"{np.percentile(values, q) * 1000:,.0f} ms" if values else "–"


def report(*, args, record: Record, seconds: float, facts: dict) -> str:
    statuses = [status for _, status, _, _ in record.requests]
    server_errors = sum(500 <= s < 600 for s in statuses)
    other = sum(not 200 <= s < 400 and not 500 <= s < 600 for s in statuses)
    scores, jobs, before, after = facts["scores"], facts["jobs"], facts["before"], facts["after"]
    restarted = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    worker_logs = {name: counts for name, counts in facts["logs"].items() if name.startswith("worker-")}
    unrecoverable = sum(counts["Unrecoverable error"] + counts["WorkerLostError"] for counts in worker_logs.values())
    worker_tracebacks = sum(counts["tracebacks"] for counts in worker_logs.values())
    n_jobs = sum(sum(counter.values()) for counter in jobs["by_kind"].values())
    lines = [
        f"machine: {facts['machine']}",
        f"load average (1/5/15 min): start {facts['load_start']}, end {facts['load_end']}",
        f"command: {facts['command']}",
        f"soak: {seconds / 60:.1f} min of load ({args.minutes} min of new work, then the jobs still running), "
        f"{len(record.requests):,} requests; {facts['corpus']}; {facts['units']:,} units open "
        f"({facts['slots']:,} slots), {record.annotators_done} annotators ran out of units",
        "",
        "| measure | value | target |",
        "| --- | ---: | ---: |",
        f"| 5xx answers | {server_errors} of {len(statuses):,} | 0 |",
        f"| other answers not 2xx/3xx (none: no answer) | {other} | 0 |",
        f"| failed jobs (all of the database) | {len(jobs['failed'])} of {n_jobs} run in the soak | 0 |",
        f"| failed command-line imports | {sum(code != 0 for _, code, _, _ in record.commands)} of "
        f"{len(record.commands)} | 0 |",
        f"| units lost (acknowledged, not stored) | {scores['lost_units']} of {scores['acknowledged_units']:,} | 0 |",
        f"| scores lost / beyond the candidates | {scores['lost_scores']} / {scores['extra_scores']} "
        f"({scores['stored_scores']:,} stored of {scores['expected_scores']:,}) | 0 |",
        f"| duplicate (candidate, annotator) scores | {scores['duplicate_pairs']} | 0 |",
        f"| worker restarts (processes replaced or gone) | {len(restarted)}"
        + (f" ({', '.join(restarted)})" if restarted else f" ({len(after)} processes, same pids)")
        + " | 0 |",
        f"| worker logs: Unrecoverable error or WorkerLostError; tracebacks | {unrecoverable}; "
        f"{worker_tracebacks} | 0 |",
        f"| jobs claimed again / shards claimed again or failed | {len(jobs['retried'])} / "
        f"{jobs['shards_retried']} / {jobs['shards_failed']} | 0 |",
        "",
        "| page | requests | p50 | p99 | not 2xx/3xx |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for kind, answers in sorted(record.by_kind().items(), key=lambda item: -len(item[1])):
        times = [seconds for _, seconds in answers]
        bad = sum(not 200 <= status < 400 for status, _ in answers)
        lines.append(f"| {kind} | {len(answers):,} | {percentile(times, 50)} | {percentile(times, 99)} | {bad} |")
    lines += [
        "",
        "| job | run | succeeded | failed | other | median seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for kind, counter in sorted(jobs["by_kind"].items()):
        durations = jobs["seconds"].get(kind, [])
        median = f"{np.median(durations):,.1f}" if durations else "–"
        other_outcomes = sum(counter.values()) - counter["succeeded"] - counter["failed"]
        lines.append(
            f"| {kind} | {sum(counter.values())} | {counter['succeeded']} | {counter['failed']} | {other_outcomes} "
            f"| {median} |"
        )
    for command, code, took, tail in record.commands:
        lines.append(f"command line: manage {command}: exit {code} in {took:.0f} s" + (f" ({tail})" if code else ""))
    lines += [f"failed job #{pk} ({kind}): {error}" for pk, kind, error in jobs["failed"]]
    lines += [f"job #{pk} ({kind}) claimed {n} times" for pk, kind, n in jobs["retried"]]
    lines += [f"job #{pk} ({kind}) left {status}" for pk, kind, status in jobs["unfinished"]]
    lines += [f"logs: {name}: {counts}" for name, counts in facts["logs"].items() if any(counts.values())]
    lines += [f"problem: {line}" for line in record.problems[:20]]
    lines += [f"score check: {scores}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--repository-lines", type=int, default=300_000)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds an annotator spends on a unit")
    parser.add_argument("--questions", type=int, default=4000, help="units open for the annotators (5 slots each)")
    parser.add_argument("--port", type=int, default=0, help="the web server's (0: a free one)")
    parser.add_argument("--keep", action="store_true", help="keep the data folder (its path is printed)")
    parser.add_argument("--password", default="soak-password-1", help=argparse.SUPPRESS)
    args = parser.parse_args()

    facts = {"machine": machine(), "load_start": load(), "command": shlex.join(["python", *sys.argv])}
    work = Path(tempfile.mkdtemp(prefix="wellchosen-soak-"))
    env = {name: value for name, value in os.environ.items() if name not in STACK_VARIABLES}
    env["WELLCHOSEN_DATA_DIR"] = str(work)
    port = args.port or free_port()
    print(f"data folder {work}; starting the stack on port {port} …", flush=True)
    stack = stack_start(work, env, port)
    try:
        stack_wait(stack, work / "stack.out")
        django_setup(work)
        print("stack up; preparing the datasets and accounts …", flush=True)
        shared = SHARED if (SHARED / "README.md").is_file() else None
        prepared = soak_data.prepare(
            work=work, shared=shared, annotators=args.annotators, questions=args.questions, password=args.password
        )
        corpus = work / "repository.txt"
        facts["corpus"] = repository_file(corpus, args.repository_lines)
        facts["units"], facts["slots"] = prepared["units"], prepared["slots"]
        from django.db import connections
        from django.utils import timezone

        since = timezone.now()
        connections.close_all()
        facts["before"] = stack_processes(stack.pid)
        print(f"load for {args.minutes} min from {time.strftime('%H:%M:%S')} …", flush=True)
        record = Record()
        seconds = asyncio.run(
            soak(
                args,
                base=f"http://127.0.0.1:{port}",
                work=work,
                env=env,
                prepared=prepared,
                corpus=corpus,
                record=record,
            )
        )
        facts["after"] = stack_processes(stack.pid) if stack.poll() is None else {}
        facts["load_end"] = load()
        facts["scores"] = soak_data.scores_check(acknowledged=record.acknowledged)
        facts["jobs"] = soak_data.jobs_check(since=since)
        facts["logs"] = logs_scan(work / "log")
        connections.close_all()
    finally:
        stack_stop(stack)
    print(report(args=args, record=record, seconds=seconds, facts=facts))
    if args.keep:
        print(f"kept {work} (the stack's output: stack.out, its logs: log/)")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
