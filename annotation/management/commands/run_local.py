"""``make run``'s last step: the Celery workers, Celery beat and the web server, started together,
their output in log files, and one short block with the address and the demo logins once all answer.

The workers do not wait on each other: ``--workers`` (2) processes take the ``default`` queue (imports,
test-set builds, crowd syncs), and one more takes the GPU queue (pools, evaluations: one model in
memory at a time), so a test-set build does not queue behind a pool job. Each is a solo-pool process:
a prefork pool's children are daemonic, and a daemonic process may not start the child that a large
repository import reads its file in (core.forked). Beat is a process of its own (exactly one runs).
"""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.services.demo import demo_accounts_ensure

READY_TIMEOUT_S = 600  # a hang guard: on a busy machine the processes import the whole project at once
WORKER_READY = " ready."  # Celery's "name@host ready." line
BEAT_READY = "beat: Starting..."
CELERY = [sys.executable, "-m", "celery", "-A", "config"]
SOLO = ["--pool=solo", "--concurrency=1"]


@dataclass
class Service:
    name: str
    command: list[str]
    log: Path
    ready: Callable[["Service"], bool]
    process: subprocess.Popen | None = None
    log_start: int = 0  # the logs are appended to: a ready line is looked for in what this start wrote

    def start(self) -> None:
        self.log_start = self.log.stat().st_size if self.log.exists() else 0
        # its own session, so that stopping it also stops what it started (runserver's reloaded child)
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def written(self) -> str:
        with self.log.open("rb") as f:
            f.seek(self.log_start)
            return f.read().decode(errors="replace")


class Command(BaseCommand):
    help = (
        "Start the Celery workers, beat and the web server, wait until all are up, then print the "
        "address and the demo logins; Ctrl-C stops them all. Output goes to DATA_DIR/log/."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--workers", type=int, default=2, help="worker processes on the default queue")

    def handle(self, *args, host: str, port: int, workers: int, **options):
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        log_dir = Path(settings.WELLCHOSEN_DATA_DIR) / "log"
        log_dir.mkdir(parents=True, exist_ok=True)
        url = f"http://{host}:{port}/"
        services = _services(log_dir, host=host, port=port, workers=workers)
        self.stdout.write(f"Starting {len(services) - 2} workers, beat and the web server on {url} …")
        # a SIGTERM or SIGHUP (the terminal closed, make stopped) stops them like Ctrl-C does: they
        # run in sessions of their own and would outlive this process otherwise
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, _interrupt)
        try:
            for service in services:
                service.start()
            _wait_ready(services)
            credentials = demo_accounts_ensure()
            self.stdout.write(
                "\n".join(
                    [
                        "",
                        self.style.SUCCESS(f"WellChosen is running at {url}"),
                        f"  researcher (datasets, admin): researcher / {credentials['researcher']}",
                        f"  annotator:                    annotator / {credentials['annotator']}",
                        f"  logs: {log_dir}/",
                        "  Ctrl-C stops them all.",
                        "",
                    ]
                )
            )
            self.stdout.flush()
            stopped = _wait_any_exit(services)
            raise CommandError(f"the {stopped.name} stopped; the end of {stopped.log}:\n{_tail(stopped.log)}")
        except KeyboardInterrupt:
            self.stdout.write("\nStopping.")
        finally:
            # a second Ctrl-C or SIGTERM while stopping (make and the terminal both forward one)
            # would cut the stop short and leave a worker or the server running
            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(signum, signal.SIG_IGN)
            _stop_all([service.process for service in services if service.process])


def _services(log_dir: Path, *, host: str, port: int, workers: int) -> list[Service]:
    def worker(name: str, queue: str) -> Service:
        command = [*CELERY, "worker", "-Q", queue, *SOLO, "-n", f"{name}@%h", "--loglevel=INFO"]
        return Service(f"worker {name}", command, log_dir / f"worker-{name}.log", _says(WORKER_READY))

    return [
        *(worker(f"default-{number}", "default") for number in range(1, workers + 1)),
        worker("gpu", settings.WELLCHOSEN_GPU_QUEUE),
        Service("beat", [*CELERY, "beat", "--loglevel=INFO"], log_dir / "beat.log", _says(BEAT_READY)),
        Service(
            "web server",
            [sys.executable, "manage.py", "runserver", f"{host}:{port}"],
            log_dir / "server.log",
            lambda service: _answers(f"http://{host}:{port}/healthz"),
        ),
    ]


def _says(line: str) -> Callable[[Service], bool]:
    return lambda service: line in service.written()


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _wait_ready(services: list[Service]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    waiting = list(services)
    while waiting:
        for service in services:
            if service.process.poll() is not None:
                raise CommandError(f"the {service.name} did not start; the end of {service.log}:\n{_tail(service.log)}")
        if time.monotonic() > deadline:
            names = ", ".join(service.name for service in waiting)
            raise CommandError(f"{names} did not answer within {READY_TIMEOUT_S} s; see {waiting[0].log.parent}/")
        waiting = [service for service in waiting if not service.ready(service)]
        time.sleep(0.5)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _wait_any_exit(services: list[Service]) -> Service:
    while True:
        for service in services:
            if service.process.poll() is not None:
                return service
        time.sleep(1)


def _stop_all(processes: list[subprocess.Popen]) -> None:
    """SIGTERM to every process group at once (a warm shutdown: a worker finishes or gives back its
    task), then wait for each; kill what is left after 20 s."""
    running = [process for process in processes if process.poll() is None]
    for process in running:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for process in running:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()


def _tail(log: Path, lines: int = 20) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else "(no log)"
