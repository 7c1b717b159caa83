"""Foreign keys checked once, set-based, after a large bulk load instead of row by row.

PostgreSQL checks a foreign key with one query per inserted row, queued until the commit because
Django's keys are DEFERRABLE INITIALLY DEFERRED; each check also locks the referenced row. At
100,000 questions (2 M scores, 400,000 candidates) those checks took longer than writing the
rows. For a load at least ``WELLCHOSEN_BULK_LOAD_MIN_ROWS`` rows long, the keys the load fills are
dropped inside the load's transaction, the rows written, the keys added back ``NOT VALID`` (new
writes are checked again from then on) and the load's own rows checked with one anti-join per key;
after the commit, ``VALIDATE CONSTRAINT`` marks each key valid again without blocking writers.

The price: dropping a key locks both of its tables (ACCESS EXCLUSIVE) until the commit, so
annotators' pages wait for the rest of the load. The locks are asked for with a short
``lock_timeout``; when another transaction holds them, the load goes on with per-row checks.
SQLite checks keys in-process, cheaply: there the load is unchanged.
"""

import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, models, transaction

logger = logging.getLogger(__name__)


@dataclass
class KeyChecks:
    """How a load's foreign keys were checked, for its report."""

    mode: str = "per row"  # or "after the load"
    keys: list[str] = field(default_factory=list)
    reason: str = ""
    seconds_locked: float = 0.0

    def as_dict(self) -> dict:
        out = {"mode": self.mode, "keys": len(self.keys)}
        if self.reason:
            out["reason"] = self.reason
        if self.mode == "after the load":
            out["seconds_locked"] = round(self.seconds_locked, 1)
        return out


@dataclass(frozen=True)
class _Key:
    table: str
    column: str
    name: str
    definition: str
    target_table: str
    target_column: str


def load_fields(*pairs: tuple[type[models.Model], str]) -> list[tuple[str, str]]:
    """(table, column) of each (model, foreign-key field name)."""
    return [(model._meta.db_table, model._meta.get_field(name).column) for model, name in pairs]


@contextmanager
def foreign_keys_after_load(*, fields: Sequence[tuple[str, str]], rows: int) -> Iterator[KeyChecks]:
    """Within the caller's transaction: for a load of ``rows`` rows into ``fields`` (table,
    column of a foreign key), check those keys once after the ``with`` block when the load is
    large enough and the locks are free; otherwise leave the per-row checks as they are."""
    checks = KeyChecks()
    threshold = settings.WELLCHOSEN_BULK_LOAD_MIN_ROWS
    if connection.vendor != "postgresql":
        checks.reason = "this database checks keys in-process"
        yield checks
        return
    if threshold <= 0 or rows < threshold:
        checks.reason = f"{rows:,} rows, under WELLCHOSEN_BULK_LOAD_MIN_ROWS ({threshold:,})" if threshold > 0 else ""
        yield checks
        return
    if not connection.in_atomic_block:
        raise RuntimeError("foreign_keys_after_load needs the load's transaction")
    keys = _keys(fields)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = %s", [f"{settings.WELLCHOSEN_BULK_LOAD_LOCK_TIMEOUT_MS}ms"])
            # A table with checks still queued cannot be altered (the dataset row this
            # transaction just made, say): run them now, and defer again the ones to come.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
            for key in keys:
                cursor.execute(f'ALTER TABLE "{key.table}" DROP CONSTRAINT "{key.name}"')
    except DatabaseError as error:
        # Another transaction holds a table (or trigger events of this one are pending):
        # the savepoint took the drops back; the keys stay, checked per row.
        checks.reason = f"the tables were busy ({str(error).strip().splitlines()[0]})"
        logger.info("bulk load: foreign keys checked per row: %s", checks.reason)
        yield checks
        return
    locked_at = time.monotonic()
    firsts = _next_ids({key.table for key in keys})
    checks.mode, checks.keys = "after the load", [key.name for key in keys]
    yield checks
    with connection.cursor() as cursor:
        # The keys left in place queued their checks (cheap ones: those columns are NULL here)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for key in keys:
            cursor.execute(f'ALTER TABLE "{key.table}" ADD CONSTRAINT "{key.name}" {key.definition} NOT VALID')
            cursor.execute(
                f'SELECT t.id, t."{key.column}" FROM "{key.table}" t '
                f'LEFT JOIN "{key.target_table}" r ON r."{key.target_column}" = t."{key.column}" '
                f'WHERE t.id >= %s AND t."{key.column}" IS NOT NULL AND r."{key.target_column}" IS NULL LIMIT 1',
                [firsts[key.table]],
            )
            orphan = cursor.fetchone()
            if orphan:
                raise IntegrityError(
                    f"{key.table} row {orphan[0]}: {key.column} = {orphan[1]} is not in {key.target_table}"
                )
    checks.seconds_locked = time.monotonic() - locked_at
    names = [(key.table, key.name) for key in keys]
    transaction.on_commit(lambda: _validate(names))


def _keys(fields: Sequence[tuple[str, str]]) -> list[_Key]:
    wanted = set(fields)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.conrelid::regclass::text, a.attname, c.conname, pg_get_constraintdef(c.oid),
                   c.confrelid::regclass::text, ra.attname
            FROM pg_constraint c
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
            JOIN pg_attribute ra ON ra.attrelid = c.confrelid AND ra.attnum = c.confkey[1]
            WHERE c.contype = 'f' AND cardinality(c.conkey) = 1 AND c.conrelid::regclass::text = ANY(%s)
            ORDER BY c.conname
            """,
            [sorted({table for table, _ in fields})],
        )
        return [_Key(*row) for row in cursor.fetchall() if (row[0], row[1]) in wanted]


def _next_ids(tables: set[str]) -> dict[str, int]:
    """The first id a row of each table written from now on can have (ids only grow)."""
    out = {}
    with connection.cursor() as cursor:
        for table in sorted(tables):
            cursor.execute(f'SELECT COALESCE(MAX(id), 0) + 1 FROM "{table}"')
            out[table] = cursor.fetchone()[0]
    return out


def _validate(names: list[tuple[str, str]]) -> None:
    """Mark the keys valid again: one scan per key, under a lock that lets reads and writes go on."""
    for table, name in names:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f'ALTER TABLE "{table}" VALIDATE CONSTRAINT "{name}"')
        except DatabaseError:
            logger.exception("bulk load: %s on %s stays NOT VALID", name, table)


def deferred_checks_run() -> None:
    """Run now the foreign-key checks this transaction has queued for its commit (PostgreSQL's keys
    are DEFERRABLE INITIALLY DEFERRED): a caller whose forked child computes meanwhile has the
    server work through them at the same time instead of after it. The checks of later writes are
    deferred again; a failing check raises here, as it would have at the commit. SQLite checks keys
    in-process at the commit, cheaply: nothing to move there."""
    if connection.vendor != "postgresql":
        return
    if not connection.in_atomic_block:
        raise RuntimeError("deferred_checks_run needs the transaction whose checks it runs")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
