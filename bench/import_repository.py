"""Benchmark: streaming repository import at subtitle-corpus scale, against the import as it was.

Builds a file of N utterances from the real corpora in ../shared/data (DailyDialog train and the
Cornell sample, repeated with a numbered variation so that every repeat is a new text), and imports
it with `repository_import` and with the peer — the import as it was at PEER_COMMIT, its module read
with `git show` and run against this tree's core (whose line reader and text functions it calls) —
each into a fresh database (a new SQLite file, or a new PostgreSQL schema), so that neither works
on the other's indexes. Prints time, throughput, peak memory (PSS) and CPU seconds of this
process with its children (on SQLite a large file is read in a child process) and, on a local
PostgreSQL, the server process's CPU seconds, and checks that the two repositories hold the same
utterances (counts and sums) when both read the same file.

    .venv/bin/python bench/import_repository.py --lines 1000000
    .venv/bin/python bench/import_repository.py --lines 10000000 --peer-lines 1000000 \
        --database postgres://postgres@127.0.0.1:5432/test

On PostgreSQL the first import into an empty table is a bulk load; ``--beside N`` first imports N
other lines into another repository (not measured), so that both runs take the incremental path
of an import beside other repositories.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The last commit before the batched import: its retrieval/services/repository_import.py is the peer.
PEER_COMMIT = "149438daa7a1c59f2ffb8543e0ee5c30266987ab"
SCHEMA = "wellchosen_bench"


class PeakMemory:
    """Samples the proportional set size (PSS: shared pages split between their processes) of this
    process and its children (a child that reads the file) every 200 ms while active (reading PSS costs
    the kernel a walk of the page tables)."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()

    @staticmethod
    def current() -> int:
        pids = ["self"] + [pid for task in Path("/proc/self/task").iterdir() for pid in _children(task)]
        total = 0
        for pid in pids:
            try:
                rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            except OSError:  # a child that just ended
                continue
            total += next(int(line.split()[1]) * 1024 for line in rollup.splitlines() if line.startswith("Pss:"))
        return total

    def __enter__(self):
        self.peak = self.current()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self.current())

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.current())


def _children(task: Path) -> list[str]:
    try:
        return (task / "children").read_text().split()
    except OSError:
        return []


def cpu_seconds() -> float:
    """CPU time of this process and of its children that ended."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def source_utterances(shared: Path) -> list[str]:
    texts = []
    for line in (shared / "dailydialog/train/dialogues_train.txt").open(encoding="utf-8"):
        texts.extend(t.strip() for t in line.split("__eou__") if t.strip())
    for path in (shared / "cornell_PARTIAL").glob("movie_lines*.txt"):
        for line in path.open(encoding="utf-8", errors="replace"):
            fields = line.rstrip("\r\n").split(" +++$+++ ")
            if len(fields) == 5 and fields[4].strip():
                texts.append(fields[4].strip())
    return texts


def write_corpus(path: Path, n: int, texts: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            round_, j = divmod(i, len(texts))
            handle.write(f"{texts[j]} {round_}\n" if round_ else f"{texts[j]}\n")


def peer_module() -> types.ModuleType:
    """retrieval/services/repository_import.py as it was at PEER_COMMIT."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{PEER_COMMIT}:retrieval/services/repository_import.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("repository_import_peer")
    exec(compile(source, f"{PEER_COMMIT[:10]}:retrieval/services/repository_import.py", "exec"), module.__dict__)
    return module


def fresh_database(work: Path, run: str) -> None:
    """An empty, migrated database for one run: a new SQLite file or a new PostgreSQL schema."""
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE; CREATE SCHEMA {SCHEMA}")
            cursor.execute(f"SET search_path TO {SCHEMA}")
    else:
        connection.close()
        connection.settings_dict["NAME"] = str(work / f"{run}.sqlite3")
    call_command("migrate", verbosity=0)


def server_cpu() -> float | None:
    """CPU seconds of this connection's PostgreSQL server process, when it runs on this machine."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(run, label: str, path: Path, lines: int, beside: Path | None) -> dict:
    from django.db import connection

    from annotation.models import Utterance
    from retrieval.services.repository_import import repository_import

    if beside is not None:
        repository_import(path=beside, name="beside")

    server_before = server_cpu()
    cpu = cpu_seconds()
    with PeakMemory() as memory:
        start = time.perf_counter()
        report = run(path=path, name="bench")
        seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu
    server_after = server_cpu()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*), SUM(source_line), SUM(n_tokens), SUM(LENGTH(text)), MIN(text_hash), MAX(text_hash) "
            f"FROM {Utterance._meta.db_table} WHERE repository_id = (SELECT id FROM retrieval_repository "
            "WHERE name = 'bench')"
        )
        content = cursor.fetchone()
    return {
        "label": label,
        "lines": lines,
        "seconds": seconds,
        "cpu": cpu,
        "server_cpu": None if server_before is None or server_after is None else server_after - server_before,
        "peak": memory.peak,
        "report": report,
        "content": content,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--peer-lines", type=int, help="lines of the peer's file (default: --lines)")
    parser.add_argument("--beside", type=int, default=0, help="lines in another repository first (see above)")
    parser.add_argument("--database", default="", help="DATABASE_URL (default: fresh SQLite files)")
    parser.add_argument(
        "--shared", type=Path, default=Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    args = parser.parse_args()
    peer_lines = args.peer_lines or args.lines
    if not (args.shared / "dailydialog").is_dir():
        sys.exit(f"real data not found at {args.shared} (set WELLCHOSEN_SHARED_DATA)")

    work = Path(tempfile.mkdtemp(prefix="wellchosen-bench-"))
    os.environ["WELLCHOSEN_DATA_DIR"] = str(work)
    os.environ["DATABASE_URL"] = args.database or f"sqlite:///{work / 'bench.sqlite3'}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
    os.environ["DJANGO_DEBUG"] = "0"
    import django

    django.setup()
    from django.db import connection

    from retrieval.services.repository_import import repository_import

    peer = peer_module()
    texts = source_utterances(args.shared)
    corpus = work / "utterances.txt"
    write_corpus(corpus, args.lines, texts)
    peer_corpus = corpus
    if peer_lines != args.lines:
        peer_corpus = work / "peer.txt"
        write_corpus(peer_corpus, peer_lines, texts)
    beside = None
    if args.beside:
        beside = work / "beside.txt"
        beside.write_text("".join(f"Beside line {i}.\n" for i in range(args.beside)), encoding="utf-8")
    print(
        f"database: {connection.vendor}; corpus: {args.lines:,} lines ({corpus.stat().st_size / 1e6:.0f} MB) "
        f"from {len(texts):,} real utterances; peer: the import at {PEER_COMMIT[:10]}, {peer_lines:,} lines"
        + (f"; each beside a repository of {args.beside:,} lines" if args.beside else "")
    )

    runs = []
    for label, run, path, lines in [
        (f"peer: import at {PEER_COMMIT[:10]}", peer.repository_import, peer_corpus, peer_lines),
        ("repository_import (ours)", repository_import, corpus, args.lines),
    ]:
        fresh_database(work, run=label.split()[0].strip(":"))
        runs.append(measured(run, label, path, lines, beside))
        if connection.vendor == "sqlite":
            connection.close()

    print(f"{'run':<34}{'lines':>12}{'seconds':>9}{'lines/s':>10}{'peak PSS MB':>13}{'CPU s':>7}{'server CPU s':>14}")
    for r in runs:
        server = "" if r["server_cpu"] is None else f"{r['server_cpu']:.1f}"
        print(
            f"{r['label']:<34}{r['lines']:>12,}{r['seconds']:>9.1f}{r['lines'] / r['seconds']:>10,.0f}"
            f"{r['peak'] / 1e6:>13.0f}{r['cpu']:>7.1f}{server:>14}"
        )
    peer_run, ours = runs
    rate = (ours["lines"] / ours["seconds"]) / (peer_run["lines"] / peer_run["seconds"])
    print(f"speed ratio ours/peer (lines/s): {rate:.2f}x")
    report = ours["report"]
    print(
        f"ours: inserted {report['inserted']:,}, duplicates {report['duplicates']:,}, "
        f"skipped short {report['skipped_short']:,}, too long {report['skipped_too_long']:,}"
    )
    if peer_lines == args.lines:
        same = peer_run["report"] == report and peer_run["content"] == ours["content"]
        print("same repository as the peer (report, count and sums):", "yes" if same else "NO")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
    connection.close()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
