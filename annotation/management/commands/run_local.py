"""``make run``'s last step: the Celery worker and the web server, started together, their output in
log files, and one short block with the address and the demo logins once both answer."""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.services.demo import demo_accounts_ensure

READY_TIMEOUT_S = 180
WORKER_READY = " ready."  # Celery's "celery@host ready." line


class Command(BaseCommand):
    help = (
        "Start the Celery worker (with beat) and the web server, wait until both are up, then print the "
        "address and the demo logins; Ctrl-C stops both. Output goes to DATA_DIR/log/."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args, host: str, port: int, **options):
        log_dir = Path(settings.WELLCHOSEN_DATA_DIR) / "log"
        log_dir.mkdir(parents=True, exist_ok=True)
        worker_log, server_log = log_dir / "worker.log", log_dir / "server.log"
        url = f"http://{host}:{port}/"
        self.stdout.write(f"Starting the worker and the web server on {url} …")
        # the logs are appended to: the worker's "ready" line is searched in what this start wrote
        worker_log_start = worker_log.stat().st_size if worker_log.exists() else 0
        processes = {
            "worker": _start(
                [sys.executable, "-m", "celery", "-A", "config", "worker", "-B", "-Q", "default,gpu"]
                + ["--pool=solo", "--loglevel=INFO"],
                worker_log,
            ),
            "web server": _start([sys.executable, "manage.py", "runserver", f"{host}:{port}"], server_log),
        }
        logs = {"worker": worker_log, "web server": server_log}
        # a SIGTERM or SIGHUP (the terminal closed, make stopped) stops both like Ctrl-C does: they run
        # in sessions of their own and would outlive this process otherwise
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, _interrupt)
        try:
            _wait_ready(processes, logs, url, worker_log, worker_log_start)
            credentials = demo_accounts_ensure()
            self.stdout.write(
                "\n".join(
                    [
                        "",
                        self.style.SUCCESS(f"WellChosen is running at {url}"),
                        f"  researcher (datasets, admin): researcher / {credentials['researcher']}",
                        f"  annotator:                    annotator / {credentials['annotator']}",
                        f"  logs: {server_log}, {worker_log}",
                        "  Ctrl-C stops both.",
                        "",
                    ]
                )
            )
            self.stdout.flush()
            name = _wait_any_exit(processes)
            raise CommandError(f"the {name} stopped; the end of {logs[name]}:\n{_tail(logs[name])}")
        except KeyboardInterrupt:
            self.stdout.write("\nStopping.")
        finally:
            # a second Ctrl-C or SIGTERM while stopping (make and the terminal both forward one)
            # would cut the stop short and leave the worker or the server running
            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(signum, signal.SIG_IGN)
            for process in processes.values():
                _stop(process)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _start(command: list[str], log: Path) -> subprocess.Popen:
    # Its own session, so that stopping it also stops what it started (runserver's reloaded child).
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _wait_ready(processes: dict, logs: dict, url: str, worker_log: Path, start_offset: int) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    server_up = worker_up = False
    while not (server_up and worker_up):
        for name, process in processes.items():
            if process.poll() is not None:
                raise CommandError(f"the {name} did not start; the end of {logs[name]}:\n{_tail(logs[name])}")
        if time.monotonic() > deadline:
            raise CommandError(f"the worker and the server did not answer within {READY_TIMEOUT_S} s; see {logs}")
        server_up = server_up or _answers(url + "healthz")
        worker_up = worker_up or WORKER_READY in _read_from(worker_log, start_offset)
        time.sleep(0.5)


def _read_from(log: Path, offset: int) -> str:
    with log.open("rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _wait_any_exit(processes: dict) -> str:
    while True:
        for name, process in processes.items():
            if process.poll() is not None:
                return name
        time.sleep(1)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _tail(log: Path, lines: int = 20) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else "(no log)"
