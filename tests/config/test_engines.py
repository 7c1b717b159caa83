"""The embedded PostgreSQL and Redis of `make run` and `make test` (config.engines), for real: data
kept between runs, nothing left after a stop, and a start after a killed run."""

import os
import signal
from pathlib import Path

import psutil
import psycopg
import pytest
import redis

from config.engines import EmbeddedPostgres, EmbeddedRedis

pytestmark = [pytest.mark.slow, pytest.mark.heavy]


def processes_in(folder: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter():
        try:
            if Path(process.cwd()) == folder:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def kill_all(folder: Path) -> None:
    """SIGKILL every process of the server (a lost machine, an out-of-memory kill of them all)."""
    processes = processes_in(folder)
    for process in processes:
        process.send_signal(signal.SIGKILL)
    psutil.wait_procs(processes)


@pytest.fixture
def postgres(tmp_path):
    server = EmbeddedPostgres(tmp_path / "postgres", log=tmp_path / "postgres.log")
    yield server
    server.stop()


@pytest.fixture
def redis_engine(tmp_path):
    server = EmbeddedRedis(tmp_path / "redis", log=tmp_path / "redis.log")
    yield server
    server.stop()


def rows(postgres: EmbeddedPostgres) -> list[tuple]:
    with psycopg.connect(postgres.url("wellchosen")) as connection:
        return connection.execute("SELECT word FROM kept ORDER BY word").fetchall()


def write_row(postgres: EmbeddedPostgres, word: str) -> None:
    postgres.database_ensure("wellchosen")
    with psycopg.connect(postgres.url("wellchosen"), autocommit=True) as connection:
        connection.execute("CREATE TABLE IF NOT EXISTS kept (word text)")
        connection.execute("INSERT INTO kept VALUES (%s)", [word])


def test_postgres_keeps_its_data_from_one_start_to_the_next(postgres):
    # given a row written, then the server stopped
    postgres.start()
    write_row(postgres, "kept")
    postgres.stop()
    # when it starts again on the same folder, then the row is there
    postgres.start()
    assert rows(postgres) == [("kept",)]


def test_postgres_stop_leaves_no_process_of_its_folder(postgres):
    postgres.start()
    assert processes_in(postgres.root)
    postgres.stop()
    assert not processes_in(postgres.root)
    assert not (postgres.root / "postmaster.pid").exists()


def test_a_postgres_left_running_by_a_killed_run_is_replaced_by_the_next_start(postgres, tmp_path):
    # given a server that a run killed before its stop left running
    postgres.start()
    write_row(postgres, "before")
    left = {process.pid for process in processes_in(postgres.root)}
    # when the next run starts one on the same folder
    again = EmbeddedPostgres(tmp_path / "postgres", log=tmp_path / "postgres.log")
    again.start()
    # then the old one was stopped, a new one serves the same data
    assert left and not left & {process.pid for process in processes_in(postgres.root)}
    assert rows(again) == [("before",)]


def test_the_lock_files_of_a_killed_postgres_do_not_stop_the_next_start(postgres):
    # given a server killed with all its processes, its postmaster.pid and socket lock left behind
    postgres.start()
    write_row(postgres, "committed")
    kill_all(postgres.root)
    assert (postgres.root / "postmaster.pid").exists()
    # when it starts again, then it recovers the committed row
    postgres.start()
    assert rows(postgres) == [("committed",)]


def test_a_postmaster_pid_that_names_another_process_does_not_stop_the_start(postgres):
    # given a server killed, and its old process number now taken by another process (this one)
    postgres.start()
    write_row(postgres, "committed")
    kill_all(postgres.root)
    lock = postgres.root / "postmaster.pid"
    lock.write_text(lock.read_text().replace(lock.read_text().splitlines()[0], str(os.getpid()), 1))
    # when it starts again, then it does, and this process was left alone
    postgres.start()
    assert rows(postgres) == [("committed",)]


def test_a_folder_too_deep_for_a_socket_gets_its_socket_in_a_short_folder(tmp_path):
    # given a data folder whose socket path would pass the limit of a unix socket's path
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 5, "postgres")
    server = EmbeddedPostgres(deep, log=tmp_path / "postgres.log")
    try:
        # when it starts, then it answers at its address, through a socket outside the folder
        server.start()
        server.database_ensure("wellchosen")
        assert not server.socket_dir.is_relative_to(deep)
        psycopg.connect(server.url("wellchosen")).close()
    finally:
        server.stop()
    assert not server.socket_dir.exists()


def test_redis_keeps_its_data_from_one_start_to_the_next(redis_engine):
    redis_engine.start()
    redis.Redis.from_url(redis_engine.address.url(1)).set("kept", "yes")
    redis_engine.stop()
    redis_engine.start()
    assert redis.Redis.from_url(redis_engine.address.url(1)).get("kept") == b"yes"


def test_redis_stop_leaves_no_process_of_its_folder(redis_engine):
    redis_engine.start()
    assert processes_in(redis_engine.root)
    redis_engine.stop()
    assert not processes_in(redis_engine.root)


def test_a_redis_left_running_by_a_killed_run_is_replaced_by_the_next_start(redis_engine, tmp_path):
    redis_engine.start()
    left = {process.pid for process in processes_in(redis_engine.root)}
    again = EmbeddedRedis(tmp_path / "redis", log=tmp_path / "redis.log")
    again.start()
    try:
        assert left and not left & {process.pid for process in processes_in(redis_engine.root)}
        assert again.address.answers()
    finally:
        again.stop()


def test_a_killed_redis_starts_again_on_its_left_socket(redis_engine):
    redis_engine.start()
    redis.Redis.from_url(redis_engine.address.url(0)).set("kept", "yes")
    kill_all(redis_engine.root)
    assert redis_engine.socket.exists()
    redis_engine.start()
    # the append-only file holds what was set before the kill (written before the reply; the kill of
    # the process alone needs no fsync)
    assert redis.Redis.from_url(redis_engine.address.url(0)).get("kept") == b"yes"
