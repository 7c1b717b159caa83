"""Benchmark: streaming repository import at subtitle-corpus scale.

Builds a file of N utterances from the real corpora in ../shared/data (DailyDialog train and the
Cornell sample, repeated with a numbered variation so that every line is distinct), imports it with
`repository_import`, and side by side in the same run imports a slice through the straightforward
Django ORM way (model instances + bulk_create(ignore_conflicts=True)), printing time, throughput,
peak resident memory and the speed ratio.

    .venv/bin/python bench/import_repository.py --lines 1000000
    .venv/bin/python bench/import_repository.py --lines 10000000 --database postgres://postgres@127.0.0.1:5432/test
"""

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class PeakRSS:
    """Samples this process's resident memory every 20 ms while active."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()

    @staticmethod
    def current() -> int:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def __enter__(self):
        self.peak = self.current()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self.current())

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.current())


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


def orm_import(path: Path, name: str, batch: int = 5000) -> int:
    """The peer: what one writes with the ORM alone (normalisation as ours, for a fair comparison)."""
    from annotation.models import Repository, Utterance
    from core.text import clean_text, count_tokens, text_hash

    repository = Repository.objects.create(name=name)
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            text = clean_text(line)
            if count_tokens(text) >= 1:  # the same rule as repository_import's default min_tokens
                rows.append(
                    Utterance(
                        repository=repository,
                        text=text,
                        text_hash=text_hash(text),
                        n_tokens=min(count_tokens(text), 32767),
                        source=path.name,
                        source_line=number,
                    )
                )
            if len(rows) >= batch:
                Utterance.objects.bulk_create(rows, ignore_conflicts=True)
                rows = []
    Utterance.objects.bulk_create(rows, ignore_conflicts=True)
    return Utterance.objects.filter(repository=repository).count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--peer-lines", type=int, default=100_000, help="slice imported through the ORM peer")
    parser.add_argument("--database", default="", help="DATABASE_URL (default: a fresh SQLite file)")
    parser.add_argument(
        "--shared", type=Path, default=Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    args = parser.parse_args()
    if not (args.shared / "dailydialog").is_dir():
        sys.exit(f"real data not found at {args.shared} (set WELLCHOSEN_SHARED_DATA)")

    work = Path(tempfile.mkdtemp(prefix="wellchosen-bench-"))
    os.environ["WELLCHOSEN_DATA_DIR"] = str(work)
    os.environ["DATABASE_URL"] = args.database or f"sqlite:///{work / 'bench.sqlite3'}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
    os.environ["DJANGO_DEBUG"] = "0"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from retrieval.services.repository_import import repository_import

    if connection.vendor == "postgresql":
        # a throwaway schema in the given database, dropped at the end
        with connection.cursor() as cursor:
            cursor.execute("DROP SCHEMA IF EXISTS wellchosen_bench CASCADE; CREATE SCHEMA wellchosen_bench;")
            cursor.execute("SET search_path TO wellchosen_bench")
    call_command("migrate", verbosity=0)

    texts = source_utterances(args.shared)
    corpus, peer_corpus = work / "utterances.txt", work / "peer.txt"
    write_corpus(corpus, args.lines, texts)
    write_corpus(peer_corpus, args.peer_lines, texts)
    size_mb = corpus.stat().st_size / 1e6
    print(
        f"database: {connection.vendor}; corpus: {args.lines:,} lines ({size_mb:.0f} MB) "
        f"from {len(texts):,} real utterances"
    )

    with PeakRSS() as ours_mem:
        start = time.perf_counter()
        report = repository_import(path=corpus, name="bench")
        ours = time.perf_counter() - start
    with PeakRSS() as slice_mem:
        start = time.perf_counter()
        slice_report = repository_import(path=peer_corpus, name="bench-slice")
        ours_slice = time.perf_counter() - start
    with PeakRSS() as peer_mem:
        start = time.perf_counter()
        peer_inserted = orm_import(peer_corpus, "bench-peer")
        peer = time.perf_counter() - start
    if peer_inserted != slice_report["inserted"]:
        print(f"warning: the peer kept {peer_inserted:,} utterances, ours {slice_report['inserted']:,}")

    def row(label: str, lines: int, seconds: float, memory: PeakRSS) -> str:
        return f"{label:<42}{lines:>12,}{seconds:>10.1f}{lines / seconds:>12,.0f}{memory.peak / 1e6:>13.0f}"

    print(f"{'run':<42}{'lines':>12}{'seconds':>10}{'lines/s':>12}{'peak RSS MB':>13}")
    print(row("repository_import (ours)", args.lines, ours, ours_mem))
    print(row("repository_import, slice", args.peer_lines, ours_slice, slice_mem))
    print(row("peer: ORM bulk_create(ignore_conflicts)", args.peer_lines, peer, peer_mem))
    print(f"speed ratio ours/peer on the slice: {peer / ours_slice:.2f}x")
    print(
        f"inserted {report['inserted']:,}, duplicates {report['duplicates']:,}, "
        f"skipped short {report['skipped_short']:,}"
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("DROP SCHEMA wellchosen_bench CASCADE")
    connection.close()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
