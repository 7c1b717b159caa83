"""Bulk writes for imports and builds: rows as tuples, no model instance per row.

At 100,000 questions (400,000 candidates, 2 M scores) the ORM's ``bulk_create`` spent most of an
import building a model instance and the SQL of every row, several times longer than the
database took to store them. Here a caller names the columns it fills; every other column of
the model gets its default once (``created_at`` the same moment for the whole batch), and the
rows go to the database as they are: COPY on PostgreSQL, ``executemany`` on SQLite (the
``BulkWriter`` variants; ``bulk_writer()`` picks the connection's).

Primary keys the caller needs (to write rows that point at these) are taken up front with
``ids()``, in the order the ORM would have given them, so that nothing is read back.
"""

import json
from collections.abc import Iterable, Sequence
from contextlib import contextmanager

from django.db import connection, models
from django.utils import timezone

_BATCH = 10_000


class ModelRows:
    """A model's table, the columns a caller fills (``columns``) and the defaults of the others,
    so that each row is the caller's values followed by the same constants."""

    def __init__(self, model: type[models.Model], columns: Sequence[str], *, now=None) -> None:
        self.table = model._meta.db_table
        now = timezone.now() if now is None else now
        given = set(columns)
        constants: dict[str, object] = {}
        for f in model._meta.concrete_fields:
            if f.column in given or f.primary_key:  # a key not given comes from the table's sequence
                continue
            if getattr(f, "auto_now_add", False) or getattr(f, "auto_now", False):
                value = now
            else:
                value = f.get_default()
            if isinstance(f, models.JSONField):
                constants[f.column] = json.dumps(value)
            else:
                constants[f.column] = f.get_db_prep_save(value, connection)
        unknown = given - {f.column for f in model._meta.concrete_fields}
        if unknown:
            raise ValueError(f"{model.__name__} has no column(s) {', '.join(sorted(unknown))}")
        self.columns = [*columns, *constants]
        self.constants = tuple(constants.values())
        # Columns whose values are integers, never None: COPY writes them as Python prints them.
        fields = {f.column: f for f in model._meta.concrete_fields}
        self.plain = [not fields[c].null and fields[c].get_internal_type() in _INTEGER_TYPES for c in columns]


_INTEGER_TYPES = {
    "AutoField",
    "BigAutoField",
    "SmallAutoField",
    "IntegerField",
    "BigIntegerField",
    "SmallIntegerField",
    "PositiveIntegerField",
    "PositiveBigIntegerField",
    "PositiveSmallIntegerField",
    "ForeignKey",
    "OneToOneField",
}


class BulkWriter:
    """Rows into tables in batches, within the caller's transaction."""

    def ids(self, model: type[models.Model], n: int) -> list[int]:
        """``n`` new primary keys of ``model``'s table, increasing, for rows the caller inserts."""
        raise NotImplementedError

    def insert(self, rows: ModelRows, values: Iterable[tuple]) -> int:
        """Insert each tuple of ``values`` followed by ``rows``' constants; returns how many."""
        raise NotImplementedError

    def insert_into(self, table: str, columns: Sequence[str], values: Iterable[tuple]) -> int:
        """Insert ``values`` into ``columns`` of ``table`` (a temporary one, say); returns how many."""
        raise NotImplementedError

    def analyze(self, *tables: str) -> None:
        """Refresh the planner's statistics of ``tables`` after a bulk write, so that the next queries
        (in this transaction or just after it) are planned for the rows there are now."""
        raise NotImplementedError

    @contextmanager
    def temporary_table(self, name: str, columns: dict[str, str], *, primary_key: Sequence[str] = ()):
        """A temporary table with ``columns`` (name -> SQL type) for the ``with`` block, dropped after
        it (or with the transaction's rollback, which takes back its creation)."""
        spec = ", ".join([f"{column} {kind}" for column, kind in columns.items()])
        if primary_key:
            spec += f", PRIMARY KEY ({', '.join(primary_key)})"
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {name}")
            cursor.execute(f"CREATE TEMPORARY TABLE {name} ({spec})")
        yield name
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {name}")


class PostgresBulkWriter(BulkWriter):
    """COPY in text format; keys from the table's sequence."""

    def ids(self, model: type[models.Model], n: int) -> list[int]:
        if n <= 0:
            return []
        meta = model._meta
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                [connection.ops.quote_name(meta.db_table), meta.pk.column, n],
            )
            return sorted(row[0] for row in cursor.fetchall())

    def analyze(self, *tables: str) -> None:
        # Autovacuum analyzes a table some time after a tenth of it changed; until then a table that
        # just received 2 M rows is planned as if it were empty (a hash join over every score
        # instead of an index probe per candidate).
        with connection.cursor() as cursor:
            for table in tables:
                cursor.execute(f"ANALYZE {table}")

    def insert(self, rows: ModelRows, values: Iterable[tuple]) -> int:
        # One format string per table: its plain columns as printed, the others converted, the
        # constants' text once.
        suffix = "".join("\t" + _copy_text(v).replace("%", "%%") for v in rows.constants)
        line = "\t".join(["%s"] * len(rows.plain)) + suffix
        convert = [i for i, plain in enumerate(rows.plain) if not plain]

        def text(row: tuple) -> str:
            if convert:
                row = list(row)
                for i in convert:
                    row[i] = _copy_text(row[i])
                row = tuple(row)
            return line % row

        return self._copy(rows.table, rows.columns, map(text, values))

    def insert_into(self, table: str, columns: Sequence[str], values: Iterable[tuple]) -> int:
        return self._copy(table, columns, ("\t".join(map(_copy_text, row)) for row in values))

    def _copy(self, table: str, columns: Sequence[str], lines: Iterable[str]) -> int:
        n = 0
        with connection.cursor() as cursor, connection.wrap_database_errors:
            with cursor.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                batch = []
                for line in lines:
                    batch.append(line)
                    if len(batch) >= _BATCH:
                        copy.write("\n".join(batch) + "\n")
                        n += len(batch)
                        batch = []
                if batch:
                    copy.write("\n".join(batch) + "\n")
                    n += len(batch)
        return n


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_text(value) -> str:
    """One value in COPY's text format."""
    if value is None:
        return "\\N"
    if value is True:
        return "t"
    if value is False:
        return "f"
    if isinstance(value, str):
        return value.translate(_COPY_ESCAPES)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


class SQLiteBulkWriter(BulkWriter):
    """``executemany`` of one INSERT; keys after the largest the table has given (the write lock is
    held from the transaction's start: settings open SQLite transactions IMMEDIATE)."""

    def analyze(self, *tables: str) -> None:
        pass  # SQLite plans without statistics unless ANALYZE ran once, which nothing here does

    def ids(self, model: type[models.Model], n: int) -> list[int]:
        if n <= 0:
            return []
        meta = model._meta
        with connection.cursor() as cursor:
            cursor.execute(f'SELECT MAX({meta.pk.column}) FROM "{meta.db_table}"')
            largest = cursor.fetchone()[0] or 0
            # AUTOINCREMENT tables never reuse a key, even one whose row was deleted
            cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [meta.db_table])
            row = cursor.fetchone()
        start = max(largest, row[0] if row else 0) + 1
        return list(range(start, start + n))

    def insert(self, rows: ModelRows, values: Iterable[tuple]) -> int:
        constants = rows.constants
        return self.insert_into(rows.table, rows.columns, (v + constants for v in values))

    def insert_into(self, table: str, columns: Sequence[str], values: Iterable[tuple]) -> int:
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['?'] * len(columns))})"
        n = 0
        with connection.cursor() as cursor, connection.wrap_database_errors:
            raw = cursor.cursor.connection  # the sqlite3 connection: executemany without Django's per-row work
            batch = []
            for row in values:
                batch.append(row)
                if len(batch) >= _BATCH:
                    raw.executemany(sql, batch)
                    n += len(batch)
                    batch = []
            if batch:
                raw.executemany(sql, batch)
                n += len(batch)
        return n


def bulk_writer() -> BulkWriter:
    return PostgresBulkWriter() if connection.vendor == "postgresql" else SQLiteBulkWriter()
