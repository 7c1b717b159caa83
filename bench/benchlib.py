"""Helpers shared by the benchmarks."""

import re
import socket

import psycopg


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
