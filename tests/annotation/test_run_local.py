"""``make run`` for real (config.stack run, without the demo): PostgreSQL and Redis embedded in the data
folder, migrate, then run_local's workers, beat and web server; the address printed is the port asked
for, the logins come last, and Ctrl-C or SIGTERM stops everything, the embedded servers included."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from config.engines import EmbeddedPostgres, EmbeddedRedis

ROOT = Path(__file__).resolve().parents[2]
START_DEADLINE_S = 900  # a hang guard: migrating a new PostgreSQL and starting five processes on a busy machine

pytestmark = [pytest.mark.slow, pytest.mark.heavy]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@dataclass
class Stack:
    process: subprocess.Popen
    port: int
    output: str

    def stop(self, *signals: int) -> str:
        """Send ``signals`` 0.3 s apart and return what the launcher wrote to stderr until it ended."""
        for signum in signals:
            self.process.send_signal(signum)
            time.sleep(0.3)
        _, errors = self.process.communicate(timeout=START_DEADLINE_S)
        return errors or ""


@pytest.fixture
def stack(tmp_path):
    """`make run` (config.stack run --no-demo) on an empty data folder and a free port, once it has
    printed its last line."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "REDIS_CACHE_URL")}
    env |= {"DJANGO_SETTINGS_MODULE": "config.settings.local", "WELLCHOSEN_DATA_DIR": str(tmp_path)}
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "config.stack", "run", "--no-demo", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    deadline = time.monotonic() + START_DEADLINE_S
    try:
        while not lines or "Ctrl-C stops them all." not in lines[-1]:
            assert time.monotonic() < deadline and process.poll() is None, "".join(lines)
            lines.append(process.stdout.readline())
        yield Stack(process, port, "".join(lines))
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=START_DEADLINE_S)


def processes_of(data_dir: Path) -> list[psutil.Process]:
    """Every process started for the data folder: with it in its environment, or working in it (the
    database and Redis servers, whose titles overwrite their environment)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.pid == os.getpid():
                continue
            environ, cwd = process.environ(), Path(process.cwd())
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        if environ.get("WELLCHOSEN_DATA_DIR") == str(data_dir) or cwd.is_relative_to(data_dir):
            found.append(process)
    return found


@pytest.mark.parametrize(
    "stops",
    [(signal.SIGINT,), (signal.SIGTERM,), (signal.SIGTERM, signal.SIGINT)],
    ids=["ctrl-c", "sigterm", "sigterm-then-ctrl-c-while-stopping"],
)
def test_make_run_prints_the_port_asked_for_and_the_logins_last_then_stops_everything(stack, tmp_path, stops):
    # given the running stack: the block with the address and the logins ends its output
    assert f"WellChosen is running at http://127.0.0.1:{stack.port}/" in stack.output
    assert "researcher / " in stack.output and "annotator / " in stack.output
    assert "8000" not in stack.output
    assert answers(f"http://127.0.0.1:{stack.port}/healthz")
    # when Ctrl-C is pressed (or make is terminated; or both, the second while it stops)
    errors = stack.stop(*stops)
    # then everything is gone: the port no longer answers and no process runs on the data folder,
    # neither the workers and the server nor PostgreSQL and Redis
    assert stack.process.returncode == 0 and "Traceback" not in errors, errors
    assert not answers(f"http://127.0.0.1:{stack.port}/healthz")
    assert not processes_of(tmp_path)


def test_make_run_runs_each_queue_and_beat_in_processes_of_their_own_on_the_embedded_servers(stack, tmp_path):
    # given the running stack
    processes = processes_of(tmp_path)
    commands = [process.cmdline() for process in processes]
    # then two workers take the default queue and a third the GPU queue, each its own process, and
    # beat runs once, beside them; each says it is ready in its own log
    queues = sorted(command[command.index("-Q") + 1] for command in commands if "worker" in command)
    assert queues == ["default", "default", "gpu"]
    assert sum("beat" in command for command in commands) == 1
    for name in ("worker-default-1", "worker-default-2", "worker-gpu"):
        assert " ready." in (tmp_path / "log" / f"{name}.log").read_text()
    assert "beat: Starting..." in (tmp_path / "log" / "beat.log").read_text()
    # and PostgreSQL and Redis run embedded in the data folder, where every worker reaches them
    postgres = EmbeddedPostgres(tmp_path / "postgres", log=tmp_path / "log" / "postgres.log")
    redis = EmbeddedRedis(tmp_path / "redis", log=tmp_path / "log" / "redis.log")
    servers = {p.name(): Path(p.cwd()) for p in processes if p.name() in ("postgres", "redis-server")}
    assert servers == {"postgres": postgres.root, "redis-server": redis.root}
    for process in processes:
        if "worker" in process.cmdline():
            environ = process.environ()
            assert environ["DATABASE_URL"] == postgres.url("wellchosen")
            assert environ["CELERY_BROKER_URL"] == redis.address.broker_url(0)
