"""Benchmark: many simulated annotators against a real server process on PostgreSQL.

Starts gunicorn (gthread workers) on a fresh PostgreSQL database, opens a dataset whose units
add up to --submissions (5 annotators per unit, 1 ground truth + 4 candidates per question,
attention checks in 10 % of units, drawn from a repository of 100,000 lines), and lets
--annotators simulated people work at once: each asks for its next unit (GET /annotate/, which
shows it), reads for a while (--think seconds on average) and submits its scores. Prints p50/p99
latency of "next unit" and "submit", throughput, errors, and checks that no score was lost or
duplicated.

    .venv/bin/python bench/annotation.py [--annotators 100] [--submissions 10000] [--think 1.0]
"""

import argparse
import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))

from benchlib import drop_database, free_port, fresh_database, unit_answers, unit_form  # noqa: E402


def cpu_seconds(server_pid: int, postgres_url: str) -> dict[str, float]:
    """CPU seconds used so far by the server (gunicorn and its workers), the PostgreSQL backends
    serving the bench database, and this process (the simulated annotators)."""
    import psutil
    import psycopg

    def total(processes) -> float:
        seconds = 0.0
        for process in processes:
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            seconds += times.user + times.system
        return seconds

    server = psutil.Process(server_pid)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        pids = [
            row[0]
            for row in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = 'wellchosen_bench_annotation'"
            ).fetchall()
        ]
    backends = []
    for pid in pids:
        try:
            backends.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            pass
    return {
        "server": total([server, *server.children(recursive=True)]),
        "postgres": total(backends),
        "clients": total([psutil.Process()]),
    }


def setup(n_questions: int, n_annotators: int) -> list[str]:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command

    from annotation.models import (
        Annotator,
        Candidate,
        Context,
        Dataset,
        DatasetMembership,
        Question,
        Repository,
        Turn,
        Utterance,
    )
    from annotation.services.assignment import annotation_open
    from annotation.services.datasets import dataset_save
    from core.text import count_tokens, text_hash

    call_command("migrate", verbosity=0)
    repository = Repository.objects.create(name="bench-lines")
    lines = [f"Line {i} of a film that none of the bench dialogues talk about." for i in range(100_000)]
    Utterance.objects.bulk_create(
        [
            Utterance(
                repository=repository,
                text=line,
                text_hash=text_hash(line),
                n_tokens=count_tokens(line),
                source="bench",
                source_line=i + 1,
            )
            for i, line in enumerate(lines)
        ],
        batch_size=5000,
    )
    dataset = dataset_save(
        dataset=Dataset(
            name="bench", adaptive_stopping=False, attention_check_rate=0.1, attention_check_repository=repository
        )
    )
    contexts = Context.objects.bulk_create(
        [Context(dataset=dataset, source="bench", source_line=i + 1) for i in range(n_questions)]
    )
    Turn.objects.bulk_create(
        [
            Turn(
                context=c,
                position=p,
                speaker="AB"[p % 2],
                text=f"Turn {p} of dialogue {c.pk}.",
                text_hash=text_hash(f"Turn {p} of dialogue {c.pk}."),
            )
            for c in contexts
            for p in range(3)
        ]
    )
    questions = Question.objects.bulk_create(
        [Question(dataset=dataset, context=c, ground_truth=f"The reply to dialogue {c.pk}.") for c in contexts]
    )
    Candidate.objects.bulk_create(
        [
            Candidate(
                question=q,
                text=text,
                text_hash=text_hash(text),
                is_ground_truth=(i == 0),
                source="imported" if i == 0 else "lexical",
            )
            for q in questions
            for i, text in enumerate([q.ground_truth] + [f"Candidate {j} for question {q.pk}." for j in range(4)])
        ]
    )
    annotation_open(dataset=dataset)
    cookies = []
    for i in range(n_annotators):
        user = get_user_model().objects.create_user(username=f"bench{i}", password="x")
        annotator = Annotator.objects.create(user=user, provider="internal", external_id=user.username)
        DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
        session = SessionStore()
        session["_auth_user_id"] = str(user.pk)
        session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
        session["_auth_user_hash"] = user.get_session_auth_hash()
        session.create()
        cookies.append(session.session_key)
    return cookies


async def annotator(http, think: float, stats: dict, stop_at: int, seed: int) -> None:
    """One simulated person (an aiohttp session with its own cookies): next unit, read, submit."""
    rng = random.Random(seed)
    await asyncio.sleep(rng.uniform(0, 2 * think))  # people do not all start in the same millisecond
    while stats["submitted"] < stop_at:
        start = time.perf_counter()
        async with http.get("/annotate/", allow_redirects=False) as page:  # shows the next unit
            status, text = page.status, await page.text()
        stats["next"].append(time.perf_counter() - start)
        stats["next_at"].append(start - stats["t0"])
        if status == 200 and "Nothing left to score" in text:
            return
        if status != 200:
            stats["errors"].append(f"next {status}")
            return
        keys, token, action = unit_form(text)
        await asyncio.sleep(rng.uniform(0, 2 * think))  # reading and scoring
        data = unit_answers(keys, token, rng)
        start = time.perf_counter()
        async with http.post(action, data=data, allow_redirects=False) as answer:
            status = answer.status
            await answer.read()
        stats["submit"].append(time.perf_counter() - start)
        if status != 302:
            stats["errors"].append(f"submit {status}")
            return
        stats["submitted"] += 1
        stats["items"] += len(keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--annotators", type=int, default=100)
    parser.add_argument("--submissions", type=int, default=10_000)
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between a unit and its submission")
    parser.add_argument(
        "--server-nice",
        type=int,
        default=0,
        help="run the server at this niceness (e.g. 5), so that the simulated people, who share its cores "
        "here but would be other machines in use, are not the ones kept waiting for a core",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument(
        "--postgres", default=os.environ.get("TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    )
    parser.add_argument(
        "--redis-cache",
        default="redis://127.0.0.1:6379/14",
        help="cache as in a deployment (sessions, job progress); '' for the file cache of make run",
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="wellchosen-bench-annotation-"))
    database_url = fresh_database(args.postgres, "wellchosen_bench_annotation")
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DJANGO_DEBUG": "0",
        "WELLCHOSEN_DATA_DIR": str(work),
        "CELERY_BROKER_URL": "memory://",
        "DATABASE_CONN_MAX_AGE": "60",
        "LOG_LEVEL": "WARNING",
        "REDIS_CACHE_URL": args.redis_cache,
    }
    if args.redis_cache:
        import redis

        redis.Redis.from_url(args.redis_cache).flushdb()  # our own numbered database, left empty
    os.environ.update(env)
    n_questions = -(-args.submissions // 5)
    cookies = setup(n_questions, args.annotators)
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            str(args.workers),
            "-k",
            "gthread",
            "--threads",
            str(args.threads),
            "--log-level",
            "warning",
            "--preload",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        preexec_fn=(lambda: os.nice(args.server_nice)) if args.server_nice else None,  # noqa: PLW1509
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        # Warm every worker and thread (database connections, template cache) before measuring.
        with httpx.Client(base_url=base, cookies={"sessionid": cookies[0]}) as warm:
            for _ in range(args.workers * args.threads * 2):
                warm.get("/accounts/login/")
        if os.environ.get("BENCH_PROBE"):
            with httpx.Client(base_url=base, cookies={"sessionid": cookies[-1]}) as probe:
                for _ in range(5):
                    t = time.perf_counter()
                    probe.get("/annotate/")
                    print("probe next unit", round(time.perf_counter() - t, 3))
            return
        cpu_before = cpu_seconds(server.pid, args.postgres)
        started = time.perf_counter()
        stats = {"next": [], "next_at": [], "submit": [], "errors": [], "submitted": 0, "items": 0, "t0": started}

        async def run() -> None:
            import aiohttp

            # aiohttp rather than httpx: the simulated people share the server's cores, so the
            # lighter client the better. Idle connections are dropped before gunicorn's 2 s
            # keep-alive closes them from its side.
            clients = [
                aiohttp.ClientSession(
                    base_url=base,
                    cookies={"sessionid": c},
                    cookie_jar=aiohttp.CookieJar(unsafe=True),  # cookies for 127.0.0.1 too
                    connector=aiohttp.TCPConnector(keepalive_timeout=1.0),
                    timeout=aiohttp.ClientTimeout(total=60),
                )
                for c in cookies
            ]
            stats["t0"] = time.perf_counter()
            await asyncio.gather(
                *(annotator(http, args.think, stats, args.submissions, i) for i, http in enumerate(clients))
            )
            for http in clients:
                await http.close()

        asyncio.run(run())
        elapsed = time.perf_counter() - started
        cpu_after = cpu_seconds(server.pid, args.postgres)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)

    from annotation.models import Assignment, Score

    stored_units = Assignment.objects.filter(status="submitted").count()
    candidate_items = sum(
        sum(1 for item in a.items if "candidate_id" in item)
        for a in Assignment.objects.filter(status="submitted").only("items")
    )
    stored_scores = Score.objects.count()
    duplicates = Score.objects.values("candidate_id", "annotator_id").distinct().count() != stored_scores
    ms = lambda values, q: f"{np.percentile(values, q) * 1000:,.0f} ms"  # noqa: E731
    print(
        f"{args.annotators} simulated annotators, think time {args.think} s on average, gunicorn "
        f"{args.workers} workers x {args.threads} threads, PostgreSQL, "
        f"{'Redis' if args.redis_cache else 'file'} cache, {os.cpu_count()} CPU cores (shared with the clients)"
        + (f", server at niceness {args.server_nice}" if args.server_nice else "")
    )
    print(f"{'measure':<36}{'value':>16}{'target':>12}")
    print(f"{'next unit p50':<36}{ms(stats['next'], 50):>16}")
    print(f"{'next unit p99':<36}{ms(stats['next'], 99):>16}{'<= 150 ms':>12}")
    print(f"{'submit p50':<36}{ms(stats['submit'], 50):>16}")
    print(f"{'submit p99':<36}{ms(stats['submit'], 99):>16}{'<= 150 ms':>12}")
    print(f"{'submissions':<36}{stats['submitted']:>16,}")
    print(f"{'throughput':<36}{stats['submitted'] / elapsed:>13,.1f} /s")
    print(f"{'errors':<36}{len(stats['errors']):>16}{'0':>12}")
    print(f"{'lost (submitted - stored units)':<36}{stats['submitted'] - stored_units:>16}{'0':>12}")
    print(f"{'scores stored / expected':<36}{f'{stored_scores:,} / {candidate_items:,}':>16}")
    print(f"{'duplicate scores':<36}{str(duplicates):>16}")
    # Where the CPU went (2 cores are shared by all three): milliseconds per submitted unit.
    per_unit = {k: (cpu_after[k] - cpu_before[k]) * 1000 / max(1, stats["submitted"]) for k in cpu_after}
    print(
        "CPU per unit: "
        + ", ".join(f"{k} {v:.1f} ms" for k, v in per_unit.items())
        + f"; machine busy {sum(cpu_after[k] - cpu_before[k] for k in cpu_after) / elapsed / os.cpu_count():.0%}"
    )
    slow = sorted(zip(stats["next"], stats["next_at"], strict=True), reverse=True)[:10]
    print("slowest 'next unit' (seconds, at second):", [(round(a, 2), round(b, 1)) for a, b in slow])
    if stats["errors"]:
        print("first errors:", stats["errors"][:5])
    from django.db import connections

    connections.close_all()
    drop_database(args.postgres, "wellchosen_bench_annotation")
    if args.redis_cache:
        import redis

        redis.Redis.from_url(args.redis_cache).flushdb()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
