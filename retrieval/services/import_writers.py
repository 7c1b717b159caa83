"""Writers of a repository import: batches of new utterances into the database, inside the
import's transaction, keeping the texts the repository already holds (its unique constraint decides).

One class per database path behind one interface (UtteranceWriter); utterance_writer picks it. Rows
are ``(text, text_hash, n_tokens, source_line, source_ref)`` in file order (ids follow it), all from
one source file. Plain SQL on purpose: a model instance per row costs more than the insert itself.
Writers work in the importing thread (a large file is read by a child process meanwhile, see
repository_import); a writer thread measured slower on both databases, as each of its statements
has to win the GIL back from the thread that parses.
"""

import sqlite3
from itertools import chain

from django.conf import settings
from django.db import connection

from annotation.models import Repository, Utterance
from core.errors import UserError

_TABLE = Utterance._meta.db_table
_COLUMNS = "repository_id, source, text, text_hash, n_tokens, source_line, source_ref"


class UtteranceWriter:
    """Writes batches of one repository's new utterances from one file; ``close`` says how many
    were new. A context manager: leaving it stops the writer, also after an error."""

    vendor = ""
    copy = False

    def __init__(self, *, repository: Repository, source: str) -> None:
        self.repository_id = int(repository.pk)
        self.source = source
        self.inserted = 0

    def write(self, rows: list[tuple]) -> None:
        raise NotImplementedError

    def close(self) -> int:
        """Wait for the batches written so far; the number of rows that were new."""
        self.stop()
        return self.inserted

    def stop(self) -> None:
        """Wait for work in flight and give back what the writer holds."""

    def __enter__(self) -> "UtteranceWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class SQLiteWriter(UtteranceWriter):
    """INSERT OR IGNORE, a thousand rows a statement, with a page cache of
    WELLCHOSEN_IMPORT_SQLITE_CACHE_MB for the length of the import (the unique index of a large
    repository: every new text lands on a random page of it; the connection's own size comes back)."""

    vendor = "sqlite"
    # Larger statements cost SQLite more per row (a program of thousands of rows)
    ROWS_PER_STATEMENT = 1000

    def __init__(self, *, repository: Repository, source: str) -> None:
        super().__init__(repository=repository, source=source)
        self._connection = connection.connection
        self._cache_size = int(self._connection.execute("PRAGMA cache_size").fetchone()[0])
        self._connection.execute(f"PRAGMA cache_size = -{settings.WELLCHOSEN_IMPORT_SQLITE_CACHE_MB * 1024}")
        # ?1 is the source; each row binds five more
        limit = self._connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        self._rows = min(self.ROWS_PER_STATEMENT, (limit - 1) // 5)
        self._statements: dict[int, str] = {}

    def _statement(self, n: int) -> str:
        if n not in self._statements:
            values = ", ".join(
                f"({self.repository_id}, ?1, ?{i}, ?{i + 1}, ?{i + 2}, ?{i + 3}, ?{i + 4})" for i in range(2, 5 * n, 5)
            )
            self._statements[n] = f"INSERT OR IGNORE INTO {_TABLE} ({_COLUMNS}) VALUES {values}"
        return self._statements[n]

    def write(self, rows: list[tuple]) -> None:
        per = self._rows
        full = len(rows) - len(rows) % per
        # Rows skipped by the conflict clause are not counted by SQLite's counter.
        before = self._connection.total_changes
        if full:
            self._connection.executemany(
                self._statement(per),
                [(self.source, *chain.from_iterable(rows[start : start + per])) for start in range(0, full, per)],
            )
        if full < len(rows):
            rest = rows[full:]
            self._connection.execute(self._statement(len(rest)), (self.source, *chain.from_iterable(rest)))
        self.inserted += self._connection.total_changes - before

    def stop(self) -> None:
        self._connection.execute(f"PRAGMA cache_size = {self._cache_size}")


_STAGE = "wellchosen_utterance_stage"
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_field(value: str) -> str:
    """``value`` as COPY's text format writes it."""
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        return value.translate(_COPY_ESCAPES)
    return value


class PostgresCopyWriter(UtteranceWriter):
    """COPY of a batch (text format, built in one piece) into a temporary table, then INSERT …
    SELECT … ON CONFLICT DO NOTHING from it. The repository's foreign key is checked at each
    statement instead of for every row at the commit (where nothing else runs beside the check,
    and the server would queue one event per row until then)."""

    vendor = "postgresql"
    copy = True

    def __init__(self, *, repository: Repository, source: str) -> None:
        super().__init__(repository=repository, source=source)
        with connection.cursor() as cursor:
            cursor.execute(
                f"CREATE TEMP TABLE IF NOT EXISTS {_STAGE} (text text, text_hash varchar(32), n_tokens smallint, "
                "source_line integer, source_ref varchar(64)) ON COMMIT DROP"
            )
            cursor.execute(
                "SELECT conname FROM pg_constraint WHERE contype = 'f' AND conrelid = %s::regclass "
                "AND confrelid = %s::regclass",
                [_TABLE, Repository._meta.db_table],
            )
            self._foreign_key = cursor.fetchone()[0]
            cursor.execute(f'SET CONSTRAINTS "{self._foreign_key}" IMMEDIATE')
        self._insert = (
            f"INSERT INTO {_TABLE} ({_COLUMNS}) SELECT {self.repository_id}, %s, text, text_hash, n_tokens, "
            f"source_line, source_ref FROM {_STAGE} ON CONFLICT (repository_id, text_hash) DO NOTHING"
        )

    def write(self, rows: list[tuple]) -> None:
        payload = "".join(
            [f"{_copy_field(text)}\t{digest}\t{n}\t{line}\t{_copy_field(ref)}\n" for text, digest, n, line, ref in rows]
        ).encode("utf-8")
        with connection.cursor() as cursor:
            with cursor.copy(f"COPY {_STAGE} (text, text_hash, n_tokens, source_line, source_ref) FROM STDIN") as copy:
                copy.write(payload)
            cursor.execute(self._insert, [self.source])
            self.inserted += cursor.rowcount
            cursor.execute(f"TRUNCATE {_STAGE}")

    def close(self) -> int:
        with connection.cursor() as cursor:
            cursor.execute(f'SET CONSTRAINTS "{self._foreign_key}" DEFERRED')
        return self.inserted


class PostgresInsertWriter(UtteranceWriter):
    """Multi-row INSERT … ON CONFLICT DO NOTHING, in the importing thread (the path without COPY)."""

    vendor = "postgresql"
    ROWS_PER_STATEMENT = 1000

    def write(self, rows: list[tuple]) -> None:
        with connection.cursor() as cursor:
            for start in range(0, len(rows), self.ROWS_PER_STATEMENT):
                chunk = rows[start : start + self.ROWS_PER_STATEMENT]
                placeholders = ", ".join([f"({self.repository_id}, %s, %s, %s, %s, %s, %s)"] * len(chunk))
                cursor.execute(
                    f"INSERT INTO {_TABLE} ({_COLUMNS}) VALUES {placeholders} "
                    "ON CONFLICT (repository_id, text_hash) DO NOTHING",
                    list(chain.from_iterable((self.source, *row) for row in chunk)),
                )
                self.inserted += cursor.rowcount


WRITERS: tuple[type[UtteranceWriter], ...] = (SQLiteWriter, PostgresCopyWriter, PostgresInsertWriter)


def utterance_writer(*, repository: Repository, source: str, use_copy: bool | None = None) -> UtteranceWriter:
    """The writer for this database (COPY on PostgreSQL unless ``use_copy`` is False)."""
    for writer in WRITERS:
        if writer.vendor == connection.vendor and use_copy in (None, writer.copy):
            return writer(repository=repository, source=source)
    raise UserError(f"no utterance writer for {connection.vendor} with use_copy={use_copy}")
