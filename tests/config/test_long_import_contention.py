"""A long repository import beside a running job and an annotator, on the database `make run` had
(SQLite) and on the one it has now (PostgreSQL): on SQLite the import's write transaction holds the
database's one write lock, so the job's progress report and the annotator's next unit fail with
"database is locked" (the failures of a real round: pool building while a researcher imported, the
annotator page during a large import); on PostgreSQL both go on beside it.

The import runs in its own process (tests.config.contention_roles) and holds its transaction, its rows
written, until the probe in another process is done, so nothing here depends on how fast either runs.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from config.engines import EmbeddedPostgres
from tests.config.contention_roles import IMPORT_LINES
from tests.worker_helpers import HANG_GUARD_S, database_url

ROOT = Path(__file__).resolve().parents[2]

# the test database of the pass (transaction=True: what the roles write is theirs to commit) is one
# of the two databases, the other is made by its fixture
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def role_start(role: str, url: str, folder: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": url,
        "WELLCHOSEN_DATA_DIR": str(folder / "data"),
    }
    # output to files: a pipe that nobody reads while the test waits could fill and stop the role
    with (folder / f"{role}.out").open("w") as out, (folder / f"{role}.err").open("w") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.config.contention_roles", role, str(folder)],
            cwd=ROOT, env=env, stdout=out, stderr=err,
        )  # fmt: skip


def role_errors(process: subprocess.Popen) -> str:
    role, folder = process.args[3], Path(process.args[4])
    return f"{role} failed:\n{(folder / f'{role}.err').read_text()[-3000:]}"


def role_output(process: subprocess.Popen) -> str:
    process.wait(timeout=HANG_GUARD_S)
    assert process.returncode == 0, role_errors(process)
    return (Path(process.args[4]) / f"{process.args[3]}.out").read_text()


def migrated(url: str, folder: Path) -> str:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "DATABASE_URL": url}
    env["WELLCHOSEN_DATA_DIR"] = str(folder / "data")
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return url


def appeared(path: Path, process: subprocess.Popen) -> None:
    """Wait until ``process`` writes ``path``; fail with its errors if it ends first."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not path.exists():
        if process.poll() is not None:
            pytest.fail(f"it ended before writing {path.name}: {role_errors(process)}")
        assert time.monotonic() < deadline, f"{process.args[3]} did not write {path.name}"
        time.sleep(0.05)


def contend(url: str, folder: Path) -> tuple[dict, dict]:
    """Prepare the database, log the probe in, start the import and, while it holds its
    transaction, let the probe report progress and ask for a unit. Returns what the probe saw and
    the import's report."""
    role_output(role_start("prepare", url, folder))
    probe = role_start("probe", url, folder)
    held = None
    try:
        appeared(folder / "ready", probe)
        held = role_start("import", url, folder)
        appeared(folder / "holding", held)
        role_output(probe)
    finally:
        if probe.poll() is None:  # it failed the test: a hang
            probe.kill()
        (folder / "release").touch()  # the import ends whatever the probe did
        report = json.loads(role_output(held)) if held is not None else {}
    return json.loads((folder / "probed.json").read_text()), report


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """A SQLite file database with the settings of `make run`'s old default (config.settings.base's
    database_from_url: WAL, IMMEDIATE transactions, a 30 s busy timeout): the SQLite pass's test
    database, or a new one."""
    if connection.vendor == "sqlite":
        return database_url()
    return migrated(f"sqlite:///{tmp_path / 'old-default.sqlite3'}", tmp_path)


@pytest.fixture
def postgres_url(tmp_path):
    """PostgreSQL, which `make run` now embeds: the PostgreSQL pass's test database, or an embedded
    server of this test (config.engines)."""
    if connection.vendor == "postgresql":
        yield database_url()
        return
    server = EmbeddedPostgres(tmp_path / "postgres", log=tmp_path / "postgres.log", durable=False)
    server.start()
    try:
        server.database_ensure("contention")
        yield migrated(server.url("contention"), tmp_path)
    finally:
        server.stop()


def test_on_sqlite_a_long_import_makes_a_jobs_progress_and_the_annotator_page_fail(sqlite_url, tmp_path):
    probed, report = contend(sqlite_url, tmp_path)
    assert probed["progress"] == "OperationalError: database is locked"
    assert probed["progress_raised_in"] == "core/services/jobs.py"  # JobProgress's write of the row
    assert probed["annotate"] == "OperationalError: database is locked"
    assert probed["annotate_raised_in"] == "annotation/services/assignment.py"  # leasing the unit
    assert report["inserted"] == IMPORT_LINES  # the import itself went through


def test_on_postgresql_a_jobs_progress_and_the_annotator_page_go_on_beside_a_long_import(postgres_url, tmp_path):
    probed, report = contend(postgres_url, tmp_path)
    assert probed["progress"] == "written" and probed["progress_stored"] == 1
    assert probed["annotate"] == 200 and probed["unit_shown"]
    assert report["inserted"] == IMPORT_LINES
