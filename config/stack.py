"""`make run`'s launcher: the production stack on one machine, with PostgreSQL and Redis embedded.

    python -m config.stack run [--host H] [--port P] [--no-demo]   # make run
    python -m config.stack manage COMMAND [ARGS...]                # a manage.py command on that stack
    python -m config.stack with-postgres URL -- COMMAND...         # make test's PostgreSQL pass

Django reads DATABASE_URL, CELERY_BROKER_URL and REDIS_CACHE_URL once, when its settings are
imported, and every process of the stack (migrate, load_demo, the web server, the workers) must read
the same addresses. So this module imports no Django: it starts the servers that the environment
does not name (config.engines; PostgreSQL in DATA_DIR/postgres, Redis in DATA_DIR/redis), puts their
addresses in the environment, runs each Django step as a child process that inherits it, and stops
the servers last, after the children have stopped. A variable that is set is used as it is (an
existing PostgreSQL or Redis; ``sqlite:///...`` too), and nothing is started for it.

One launcher owns a data folder's servers at a time (a lock file, DATA_DIR/stack.lock, released by the
kernel even when the launcher is killed), so a server found running on the folder when the lock is
taken was left by a killed run: it is stopped and started again. ``manage`` uses the servers of a
running ``make run``, or starts them for the length of its command.

Signals: Ctrl-C, SIGTERM or SIGHUP stops the running step (sent on as one SIGTERM: the children run in
sessions of their own, so the terminal's Ctrl-C reaches this process alone), then the servers;
further signals while stopping are ignored. A child also gets SIGTERM if this process is killed.
"""

import argparse
import ctypes
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from config.celery import SETTINGS_MODULE_GIVEN
from config.engines import EmbeddedPostgres, EmbeddedRedis, EmbeddedServer
from config.settings.env import env_path

ROOT = Path(__file__).resolve().parent.parent
DATABASE_NAME = "wellchosen"
BROKER_DB, CACHE_DB = 0, 1  # as in docker-compose.yml


class Children:
    """Runs one child at a time and relays the first stop signal to it."""

    def __init__(self):
        self.stopping = False
        self.current: subprocess.Popen | None = None
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self._stop)

    def run(self, command: list[str]) -> int:
        """Run ``command`` to its end (0 without running it once a stop was asked for)."""
        if self.stopping:
            return 0
        self.current = subprocess.Popen(command, cwd=ROOT, start_new_session=True, preexec_fn=_end_with_parent)
        try:
            return self.current.wait()
        finally:
            self.current = None

    def _stop(self, signum, frame) -> None:
        if self.stopping:
            return
        self.stopping = True
        if self.current is not None and self.current.poll() is None:
            self.current.send_signal(signal.SIGTERM)


def _end_with_parent() -> None:
    """In a child, before it runs: the kernel sends it SIGTERM when this process dies (Linux)."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


def data_dir() -> Path:
    return env_path("WELLCHOSEN_DATA_DIR", ROOT / "var")


def _unset(name: str) -> bool:
    return not os.environ.get(name)


@contextmanager
def embedded_stack(data: Path, *, share: bool):
    """Start the servers that the environment does not name and export their addresses; stop them
    at the end. ``share``: when another launcher owns the folder, use its servers instead of failing."""
    engines = []  # (server, how its address reaches the settings)
    if _unset("DATABASE_URL"):
        engines.append((EmbeddedPostgres(data / "postgres", log=data / "log" / "postgres.log"), _database_export))
    if _unset("CELERY_BROKER_URL"):
        engines.append((EmbeddedRedis(data / "redis", log=data / "log" / "redis.log"), _broker_export))
    if not engines:
        yield
        return
    data.mkdir(parents=True, exist_ok=True)
    with (data / "stack.lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            owner = True
        except BlockingIOError:
            if not share:
                raise SystemExit(f"another `make run` (config.stack) is using {data}; stop it first") from None
            owner = False
        with ExitStack() as stopping:
            for engine, export in engines:
                if owner:
                    started = time.monotonic()
                    stopping.callback(_stop, engine)
                    engine.start()
                    _say(f"{engine.name} (embedded, {engine.root}) started in {time.monotonic() - started:.1f} s")
                export(engine)
            yield


def _database_export(engine: EmbeddedPostgres) -> None:
    engine.database_ensure(DATABASE_NAME)
    os.environ["DATABASE_URL"] = engine.url(DATABASE_NAME)


def _broker_export(engine: EmbeddedRedis) -> None:
    os.environ["CELERY_BROKER_URL"] = engine.address.broker_url(BROKER_DB)
    os.environ.setdefault("REDIS_CACHE_URL", engine.address.url(CACHE_DB))


def _stop(engine: EmbeddedServer) -> None:
    engine.stop()
    _say(f"{engine.name} (embedded) stopped")


def run(*, host: str, port: int, demo: bool) -> int:
    children = Children()
    manage = [sys.executable, "manage.py"]
    steps = [[*manage, "migrate", "--noinput", "-v", "0"]]
    if demo:
        steps.append([*manage, "load_demo", "--no-accounts"])
    steps.append([*manage, "run_local", "--host", host, "--port", str(port)])
    with embedded_stack(data_dir(), share=False):
        if demo:
            _say("preparing the database and the demo data (the first start builds the demo pools: a few minutes)…")
        for step in steps:
            code = children.run(step)
            if code and not children.stopping:
                return code
    return 0


def manage(arguments: list[str]) -> int:
    children = Children()
    with embedded_stack(data_dir(), share=True):
        return children.run([sys.executable, "manage.py", *arguments])


def with_postgres(url: str, command: list[str]) -> int:
    """Run ``command`` with DATABASE_URL=``url`` when a server answers there; otherwise with an
    embedded PostgreSQL in a temporary folder (fsync off), deleted afterwards."""
    children = Children()
    if _postgres_answers(url):
        _say(f"== test suite on PostgreSQL ({url}) ==")
        os.environ["DATABASE_URL"] = url
        return children.run(command)
    folder = Path(tempfile.mkdtemp(prefix="wellchosen-test-postgres-"))
    engine = EmbeddedPostgres(folder / "data", log=folder / "postgres.log", durable=False)
    try:
        engine.start()
        database = urlsplit(url).path.lstrip("/") or "postgres"
        engine.database_ensure(database)  # as on the server named: some tests connect to it
        os.environ["DATABASE_URL"] = engine.url(database)
        _say(f"== test suite on PostgreSQL (embedded: nothing answers at {url}) ==")
        return children.run(command)
    finally:
        engine.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _say(line: str) -> None:
    # flushed: the children write to the same terminal (or pipe) in between
    print(line, flush=True)


def _postgres_answers(url: str) -> bool:
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=3).close()
        return True
    except psycopg.OperationalError:
        return False
    except psycopg.ProgrammingError as error:
        raise SystemExit(f"not a PostgreSQL URL: {url!r} ({str(error).strip()})") from None


def main(argv: list[str] | None = None) -> int:
    if not SETTINGS_MODULE_GIVEN:  # only the default that importing config (the Celery app) set
        os.environ.pop("DJANGO_SETTINGS_MODULE", None)
    parser = argparse.ArgumentParser(prog="python -m config.stack", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="the web server, workers and beat, with the demo data")
    run_parser.add_argument("--host", default="127.0.0.1")
    run_parser.add_argument("--port", type=int, default=8000)
    run_parser.add_argument("--no-demo", action="store_true", help="skip load_demo")
    manage_parser = commands.add_parser("manage", help="a manage.py command on the stack's database and broker")
    manage_parser.add_argument("arguments", nargs=argparse.REMAINDER)
    postgres_parser = commands.add_parser("with-postgres", help="a command on the PostgreSQL at URL or an embedded one")
    postgres_parser.add_argument("url")
    postgres_parser.add_argument("run", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    if options.command == "run":
        return run(host=options.host, port=options.port, demo=not options.no_demo)
    if options.command == "manage":
        return manage(options.arguments)
    return with_postgres(options.url, options.run[1:] if options.run[:1] == ["--"] else options.run)


if __name__ == "__main__":
    sys.exit(main())
