"""`make run`'s launcher and `make test`'s PostgreSQL pass (config.stack), for real."""

import fcntl
import os
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from config.engines import EmbeddedPostgres, EmbeddedRedis
from config.stack import embedded_stack

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.heavy]


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


def test_manage_runs_a_command_on_the_stacks_servers_and_stops_them_after(tmp_path):
    # given a data folder where no `make run` runs, and an environment that names no server
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "REDIS_CACHE_URL")}
    env |= {"WELLCHOSEN_DATA_DIR": str(tmp_path)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    probe = "from django.db import connection; from django.conf import settings; "
    probe += "print('ON', connection.vendor, connection.settings_dict['HOST'], settings.CELERY_BROKER_URL)"
    # when a management command runs through the launcher
    done = subprocess.run(
        [sys.executable, "-m", "config.stack", "manage", "shell", "-c", probe],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard
    )
    # then it ran on the embedded PostgreSQL and Redis of that folder, which are stopped afterwards
    assert done.returncode == 0, done.stderr
    on = next(line for line in done.stdout.splitlines() if line.startswith("ON")).split()
    postgres = EmbeddedPostgres(tmp_path / "postgres", log=tmp_path / "log" / "postgres.log")
    redis = EmbeddedRedis(tmp_path / "redis", log=tmp_path / "log" / "redis.log")
    assert on[1:] == ["postgresql", str(postgres.socket_dir), redis.address.broker_url(0)]
    assert "PostgreSQL (embedded) stopped" in done.stdout
    assert not [p for p in psutil.process_iter() if _works_in(p, tmp_path)]


def _works_in(process: psutil.Process, folder: Path) -> bool:
    try:
        return Path(process.cwd()).is_relative_to(folder)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
