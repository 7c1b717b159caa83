"""`make run`'s launcher and `make test`'s PostgreSQL pass (config.stack), for real."""

import fcntl
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from config.stack import embedded_stack

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


def test_with_postgres_runs_the_command_on_an_embedded_server_when_none_answers_then_removes_it(tmp_path):
    # given a PostgreSQL URL where nothing answers
    url = f"postgres://postgres@127.0.0.1:{closed_port()}/probe"
    probe = (
        "import os, psycopg; url = os.environ['DATABASE_URL']; "
        "psycopg.connect(url.rsplit('/', 1)[0] + '/postgres').close(); print('REACHED', url)"
    )
    # when a command runs with it
    done = subprocess.run(
        [sys.executable, "-m", "config.stack", "with-postgres", url, "--", sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard
    )
    # then the command reached an embedded server, named after the URL's database, which is gone afterwards
    assert done.returncode == 0, done.stderr
    assert "embedded: nothing answers at" in done.stdout
    reached = next(line for line in done.stdout.splitlines() if line.startswith("REACHED"))
    assert reached.endswith("/probe") and "%2F" in reached
    socket_folder = Path(reached.split("@", 1)[1].rsplit("/", 1)[0].replace("%2F", "/"))
    assert not socket_folder.exists()


def test_a_second_launcher_on_a_data_folder_in_use_is_refused(tmp_path, monkeypatch):
    # given a data folder whose lock another launcher holds
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)
    with (tmp_path / "stack.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # when `make run` starts on it, then it stops with a message, before starting any server
        with pytest.raises(SystemExit, match="another `make run`"), embedded_stack(tmp_path, share=False):
            pass
    assert not (tmp_path / "postgres").exists()
