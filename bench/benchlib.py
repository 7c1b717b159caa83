"""Helpers shared by the benchmarks."""

import re
import socket

import psycopg


def head(source, target, lines: int):
    """The first ``lines`` lines of ``source`` written to ``target`` (a sample of a data file)."""
    with open(source, encoding="utf-8") as src, open(target, "w", encoding="utf-8") as out:
        for n, line in enumerate(src):
            if n >= lines:
                break
            out.write(line)
    return target


def fresh_database(admin_url: str, name: str) -> str:
    """Drop and create a PostgreSQL database next to ``admin_url``'s; return its URL."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + "/" + name


def drop_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unit_form(page: str) -> tuple[list[str], str, str]:
    """The annotator page's unit form: the keys of its responses' score fields, its CSRF token and
    where it posts (the unit's own URL)."""
    keys = re.findall(r'name="score-([0-9a-f]+)" value="0"', page)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    action = re.search(r'action="([^"]+)"[^>]*id="unit-form"', page).group(1)
    return keys, token, action


def unit_answers(keys: list[str], token: str, rng) -> dict[str, str]:
    """A simulated person's submission of a unit form: a random score for every response."""
    return {f"score-{key}": str(rng.randint(0, 5)) for key in keys} | {
        "csrfmiddlewaretoken": token,
        "duration_ms": "9000",
    }


# The PostgreSQL settings a bulk load and a set-based build depend on.
POSTGRES_SETTINGS = (
    "shared_buffers",
    "work_mem",
    "maintenance_work_mem",
    "max_wal_size",
    "checkpoint_timeout",
    "wal_level",
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "effective_io_concurrency",
    "max_parallel_workers_per_gather",
    "jit",
)


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def load_average() -> str:
    import os

    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def machine_facts(database_url: str = "") -> list[str]:
    """What decides a figure, printed beside it: the CPU, its cores, the load (1/5/15 min), the
    memory, and for PostgreSQL its version and the settings of POSTGRES_SETTINGS."""
    import os
    import platform

    memory = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as meminfo:
            total_kb = int(next(line for line in meminfo if line.startswith("MemTotal")).split()[1])
        memory = f", {total_kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    lines = [
        f"machine: {cpu_model()}, {os.cpu_count()} CPUs{memory}, Python {platform.python_version()}; "
        f"load average {load_average()} (1/5/15 min)"
    ]
    if database_url.startswith("postgres"):
        with psycopg.connect(database_url, autocommit=True) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            rows = conn.execute(
                "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s) ORDER BY name",
                [list(POSTGRES_SETTINGS)],
            ).fetchall()
        settings = ", ".join(f"{name}={setting}" for name, setting in rows)
        lines.append(f"PostgreSQL {version}: {settings}")
    return lines
