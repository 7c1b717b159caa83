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


# AMD's (family, model) of the EPYC generations a cloud VM reports only as "AMD EPYC"
_AMD_GENERATIONS = {
    (23, 1): "Zen 1, EPYC 7001",
    (23, 49): "Zen 2, EPYC 7002",
    (25, 1): "Zen 3, EPYC 7003",
    (25, 17): "Zen 4, EPYC 9004",
    (26, 2): "Zen 5, EPYC 9005",
}


def cpu_generation() -> str:
    """Family, model and vector instructions: two VMs both called "AMD EPYC" (or "Intel Xeon") can
    be cores years apart, and the vector units decide a model's FLOP rate."""
    fields: dict[str, str] = {}
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            key, _, value = line.partition(":")
            key = key.strip()
            if key in ("vendor_id", "cpu family", "model", "flags") and key not in fields:
                fields[key] = value.strip()
            if not line.strip() and fields:
                break
    except OSError:
        return "unknown"
    flags = set(fields.get("flags", "").split())
    vector = "+".join(f for f in ("avx2", "avx512f", "avx512_bf16", "amx_tile") if f in flags) or "no AVX2"
    try:
        family, model = int(fields["cpu family"]), int(fields["model"])
    except (KeyError, ValueError):
        return vector
    name = _AMD_GENERATIONS.get((family, model), "") if fields.get("vendor_id") == "AuthenticAMD" else ""
    return f"family {family} model {model}{' (' + name + ')' if name else ''}, {vector}"


def python_speed() -> str:
    """One core's speed at the interpreter work an import does (hashing and splitting text), as
    the time of a fixed workload: compare it between machines before comparing their figures."""
    import hashlib
    import time

    texts = [f"line {i} of a dialogue, with some words\tand a tab" for i in range(200_000)]
    start = time.perf_counter()
    for text in texts:
        hashlib.md5(" ".join(text.lower().split()).encode()).hexdigest()
    return f"{time.perf_counter() - start:.2f} s"


def postgres_speed(conn) -> str:
    """The server's speed at a bulk write, as the time of a fixed one (a million rows into a
    temporary table with an index; no WAL, so the disk does not enter)."""
    import time

    start = time.perf_counter()
    conn.execute("CREATE TEMPORARY TABLE bench_speed (id bigint PRIMARY KEY, v int)")
    conn.execute("INSERT INTO bench_speed SELECT i, i % 7 FROM generate_series(1, 1000000) i")
    conn.execute("DROP TABLE bench_speed")
    return f"{time.perf_counter() - start:.2f} s"


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
        f"machine: {cpu_model()} ({cpu_generation()}), {os.cpu_count()} CPUs{memory}, Python "
        f"{platform.python_version()}; load average {load_average()} (1/5/15 min); one core's Python "
        f"workload {python_speed()}"
    ]
    if database_url.startswith("postgres"):
        with psycopg.connect(database_url, autocommit=True) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            rows = conn.execute(
                "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s) ORDER BY name",
                [list(POSTGRES_SETTINGS)],
            ).fetchall()
            speed = postgres_speed(conn)
        settings = ", ".join(f"{name}={setting}" for name, setting in rows)
        lines.append(f"PostgreSQL {version}: {settings}; a million-row indexed write {speed}")
    return lines
