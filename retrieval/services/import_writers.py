"""Writers of a repository import: batches of new utterances into the database, inside the
import's transaction, keeping the texts the repository already holds (its unique constraint decides).

One class per database path behind one interface (UtteranceWriter); utterance_writer picks the first
that claims the import (on PostgreSQL the bulk load into an empty table, else the incremental COPY
path). Rows are ``(text, text_hash, n_tokens, source_line, source_ref, original_text)`` in file
order (ids follow it), all from one source file; ``encode`` turns a batch into what ``write`` sends, on the reading
side. Plain SQL on purpose: a model instance per row costs more than the insert itself. Writers
work in the importing thread (a large file is read by a child process meanwhile, see
repository_import); a writer thread measured slower on both databases, as each of its statements
has to win the GIL back from the thread that parses.
"""

import sqlite3
from itertools import chain

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection, transaction

from annotation.models import Repository, Utterance
from core.errors import UserError

_TABLE = Utterance._meta.db_table
_COLUMNS = "repository_id, source, text, text_hash, n_tokens, source_line, source_ref, original_text"
_PER_ROW = 6  # the values of a row


class UtteranceWriter:
    """Writes batches of one repository's new utterances from one file; ``close`` says how many
    were new. A context manager: leaving it stops the writer, also after an error."""

    vendor = ""
    copy = False

    @classmethod
    def claim(cls) -> bool:
        """Whether this writer takes this import (beyond its database and COPY)."""
        return True

    def __init__(self, *, repository: Repository, source: str) -> None:
        self.repository_id = int(repository.pk)
        self.source = source
        self.inserted = 0

    def encode(self, rows: list[tuple]) -> object:
        """A batch as ``write`` takes it: work without the database, done where the file is read
        (a child process for a large file) to leave the importing process to the database."""
        return rows

    def write(self, batch) -> None:
        """Write a batch that ``encode`` made."""
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
        # ?1 is the source; each row binds _PER_ROW more
        limit = self._connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        self._rows = min(self.ROWS_PER_STATEMENT, (limit - 1) // _PER_ROW)
        self._statements: dict[int, str] = {}

    def _statement(self, n: int) -> str:
        if n not in self._statements:
            values = ", ".join(
                f"({self.repository_id}, ?1, {', '.join(f'?{i + k}' for k in range(_PER_ROW))})"
                for i in range(2, _PER_ROW * n, _PER_ROW)
            )
            self._statements[n] = f"INSERT OR IGNORE INTO {_TABLE} ({_COLUMNS}) VALUES {values}"
        return self._statements[n]

    def encode(self, rows: list[tuple]) -> tuple[list[tuple], tuple]:
        """The parameters of the full statements, and of one statement for the rest."""
        per = self._rows
        full = len(rows) - len(rows) % per
        return (
            [(self.source, *chain.from_iterable(rows[start : start + per])) for start in range(0, full, per)],
            (self.source, *chain.from_iterable(rows[full:])),
        )

    def write(self, batch: tuple[list[tuple], tuple]) -> None:
        full, rest = batch
        # Rows skipped by the conflict clause are not counted by SQLite's counter.
        before = self._connection.total_changes
        if full:
            self._connection.executemany(self._statement(self._rows), full)
        if len(rest) > 1:
            self._connection.execute(self._statement((len(rest) - 1) // _PER_ROW), rest)
        self.inserted += self._connection.total_changes - before

    def stop(self) -> None:
        self._connection.execute(f"PRAGMA cache_size = {self._cache_size}")


_STAGE = "wellchosen_utterance_stage"
_REPEATS = "wellchosen_utterance_repeats"
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_STAGE_COLUMNS = "text, text_hash, n_tokens, source_line, source_ref, original_text"


def _copy_field(value: str) -> str:
    """``value`` as COPY's text format writes it."""
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        return value.translate(_COPY_ESCAPES)
    return value


def _stage_create(cursor, *, ordinal: bool = False) -> None:
    """The temporary table of the batches; ``ordinal`` numbers its rows in the order they came. Hashes
    compare as bytes (their order is of no matter, and a sort by the "C" collation took half the time)."""
    cursor.execute(
        f'CREATE TEMP TABLE IF NOT EXISTS {_STAGE} (text text, text_hash varchar(32) COLLATE "C", n_tokens smallint, '
        "source_line integer, source_ref varchar(64), original_text text"
        + (", ordinal bigint GENERATED ALWAYS AS IDENTITY" if ordinal else "")
        + ") ON COMMIT DROP"
    )


def _copy_payload(rows: list[tuple]) -> bytes:
    """A batch in COPY's text format, built in one piece."""
    return "".join(
        [
            f"{_copy_field(text)}\t{digest}\t{n}\t{line}\t{_copy_field(ref)}\t{_copy_field(original)}\n"
            for text, digest, n, line, ref, original in rows
        ]
    ).encode("utf-8")


def _stage_copy(cursor, payload: bytes) -> None:
    """COPY of a batch into the temporary table."""
    with cursor.copy(f"COPY {_STAGE} ({_STAGE_COLUMNS}) FROM STDIN") as copy:
        copy.write(payload)


class PostgresCopyWriter(UtteranceWriter):
    """COPY of a batch into a temporary table, then INSERT … SELECT … ON CONFLICT DO NOTHING from
    it. The repository's row is locked by the import (FOR NO KEY UPDATE: it cannot be deleted
    before the commit), so the foreign key's check of every row is left out where the session may
    set ``session_replication_role`` (a superuser's; the check cost as much server time as the
    insert); elsewhere it runs at each statement instead of for every row at the commit (where
    nothing else runs beside it, and the server would queue one event per row until then)."""

    vendor = "postgresql"
    copy = True

    def __init__(self, *, repository: Repository, source: str) -> None:
        super().__init__(repository=repository, source=source)
        with connection.cursor() as cursor:
            _stage_create(cursor)
            cursor.execute(
                "SELECT conname FROM pg_constraint WHERE contype = 'f' AND conrelid = %s::regclass "
                "AND confrelid = %s::regclass",
                [_TABLE, Repository._meta.db_table],
            )
            self._foreign_key = cursor.fetchone()[0]
            cursor.execute(f'SET CONSTRAINTS "{self._foreign_key}" IMMEDIATE')
            _repository_lock(cursor, self.repository_id)
            self._replica = _replica_role_set(cursor)
        self._insert = (
            f"INSERT INTO {_TABLE} ({_COLUMNS}) SELECT {self.repository_id}, %s, {_STAGE_COLUMNS} "
            f"FROM {_STAGE} ON CONFLICT (repository_id, text_hash) DO NOTHING"
        )

    def encode(self, rows: list[tuple]) -> bytes:
        return _copy_payload(rows)

    def write(self, batch: bytes) -> None:
        with connection.cursor() as cursor:
            _stage_copy(cursor, batch)
            cursor.execute(self._insert, [self.source])
            self.inserted += cursor.rowcount
            cursor.execute(f"TRUNCATE {_STAGE}")

    def close(self) -> int:
        # (after an error the transaction is rolled back, and these settings with it)
        with connection.cursor() as cursor:
            cursor.execute(f'SET CONSTRAINTS "{self._foreign_key}" DEFERRED')
            if self._replica:
                cursor.execute("SET LOCAL session_replication_role = origin")
        return self.inserted


def _repository_lock(cursor, repository_id: int) -> None:
    """The repository's row, locked until the commit: not deleted under the import, and one import
    of it at a time."""
    cursor.execute(f"SELECT id FROM {Repository._meta.db_table} WHERE id = %s FOR NO KEY UPDATE", [repository_id])


def _replica_role_set(cursor) -> bool:
    """Turn the foreign-key triggers off for this transaction, where the session may."""
    try:
        with transaction.atomic():
            cursor.execute("SET LOCAL session_replication_role = replica")
    except DatabaseError:
        return False
    return True


class PostgresBulkWriter(UtteranceWriter):
    """The first import into an empty utterance table (``claim``: the table, empty, locked for the
    import): every batch is copied into a temporary table, and at the end the first line of each
    text goes into the table in one INSERT … SELECT (the repeated lines found by one sort of their
    hashes; ids in the order of the rows), with the table's secondary indexes,
    its unique constraint and its foreign key dropped before and built again after. One sort for
    each index and one join for the foreign key cost a fraction of a B-tree insertion and a
    foreign-key query for every row, which bound the incremental path (bench/README.md). Not for a
    table that holds other repositories: it would stay locked for their readers while all their rows
    are indexed again."""

    vendor = "postgresql"
    copy = True

    @classmethod
    def claim(cls) -> bool:
        if _table_occupied():
            return False
        try:
            with transaction.atomic():  # a savepoint: rolling it back gives the lock back
                with connection.cursor() as cursor:
                    cursor.execute(f"LOCK TABLE {_TABLE} IN ACCESS EXCLUSIVE MODE NOWAIT")
                if _table_occupied():
                    raise _Occupied
        except (OperationalError, _Occupied):
            return False
        return True

    def __init__(self, *, repository: Repository, source: str) -> None:
        super().__init__(repository=repository, source=source)
        sort_mb = settings.WELLCHOSEN_IMPORT_POSTGRES_SORT_MB
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {_STAGE}")  # one of an incremental import before
            _stage_create(cursor, ordinal=True)
            _repository_lock(cursor, self.repository_id)
            cursor.execute(f"SET LOCAL work_mem = '{sort_mb}MB'")
            cursor.execute(f"SET LOCAL maintenance_work_mem = '{sort_mb}MB'")
            # unique and foreign-key constraints, then the other indexes but the primary key (which
            # the rows of other tables refer to, and which grows in order anyway)
            cursor.execute(
                "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass "
                "AND contype IN ('u', 'f') ORDER BY contype DESC, conname",
                [_TABLE],
            )
            constraints = cursor.fetchall()
            cursor.execute(
                "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
                "WHERE x.indrelid = %s::regclass AND NOT x.indisprimary AND NOT EXISTS "
                "(SELECT 1 FROM pg_constraint c WHERE c.conrelid = x.indrelid AND c.conindid = x.indexrelid) "
                "ORDER BY i.relname",
                [_TABLE],
            )
            indexes = cursor.fetchall()
            for name, _ in constraints:
                cursor.execute(f'ALTER TABLE {_TABLE} DROP CONSTRAINT "{name}"')
            for name, _ in indexes:
                cursor.execute(f'DROP INDEX "{name}"')
        unique = [(n, d) for n, d in constraints if not d.startswith("FOREIGN KEY")]
        foreign = [(n, d) for n, d in constraints if d.startswith("FOREIGN KEY")]
        self._rebuild = (
            [f'ALTER TABLE {_TABLE} ADD CONSTRAINT "{name}" {definition}' for name, definition in unique]
            + [definition for _, definition in indexes]
            + [f'ALTER TABLE {_TABLE} ADD CONSTRAINT "{name}" {definition}' for name, definition in foreign]
        )

    def encode(self, rows: list[tuple]) -> bytes:
        return _copy_payload(rows)

    def write(self, batch: bytes) -> None:
        with connection.cursor() as cursor:
            _stage_copy(cursor, batch)

    def close(self) -> int:
        with connection.cursor() as cursor:
            # Rows whose text came earlier in the file: one sort of (hash, ordinal) pairs.
            cursor.execute(
                f"CREATE TEMP TABLE {_REPEATS} ON COMMIT DROP AS SELECT ordinal FROM (SELECT ordinal, "
                f"row_number() OVER (PARTITION BY text_hash ORDER BY ordinal) AS nth FROM {_STAGE}) AS numbered "
                "WHERE nth > 1"
            )
            cursor.execute(f"ANALYZE {_REPEATS}")
            # The ids follow the file: the sequence's next value plus the row's ordinal (the table is
            # locked, nothing else takes ids meanwhile). The rows go in as read, so the primary key
            # grows in order.
            cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [_TABLE])
            base = int(cursor.fetchone()[0])
            cursor.execute(
                f"INSERT INTO {_TABLE} (id, {_COLUMNS}) SELECT {base} + ordinal, {self.repository_id}, %s, "
                f"{_STAGE_COLUMNS} FROM {_STAGE} WHERE NOT EXISTS "
                f"(SELECT FROM {_REPEATS} WHERE {_REPEATS}.ordinal = {_STAGE}.ordinal)",
                [self.source],
            )
            self.inserted = cursor.rowcount
            cursor.execute(f"SELECT setval(pg_get_serial_sequence(%s, 'id'), (SELECT max(id) FROM {_TABLE}))", [_TABLE])
            cursor.execute(f"DROP TABLE {_STAGE}, {_REPEATS}")
            for statement in self._rebuild:
                cursor.execute(statement)
        return self.inserted


class _Occupied(Exception):
    pass


def _table_occupied() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {_TABLE})")
        return bool(cursor.fetchone()[0])


class PostgresInsertWriter(UtteranceWriter):
    """Multi-row INSERT … ON CONFLICT DO NOTHING, in the importing thread (the path without COPY)."""

    vendor = "postgresql"
    ROWS_PER_STATEMENT = 1000

    def write(self, rows: list[tuple]) -> None:
        with connection.cursor() as cursor:
            for start in range(0, len(rows), self.ROWS_PER_STATEMENT):
                chunk = rows[start : start + self.ROWS_PER_STATEMENT]
                placeholders = ", ".join([f"({self.repository_id}, %s{', %s' * _PER_ROW})"] * len(chunk))
                cursor.execute(
                    f"INSERT INTO {_TABLE} ({_COLUMNS}) VALUES {placeholders} "
                    "ON CONFLICT (repository_id, text_hash) DO NOTHING",
                    list(chain.from_iterable((self.source, *row) for row in chunk)),
                )
                self.inserted += cursor.rowcount


# The first whose claim holds; the bulk writer where it can, before the incremental one
WRITERS: tuple[type[UtteranceWriter], ...] = (
    SQLiteWriter,
    PostgresBulkWriter,
    PostgresCopyWriter,
    PostgresInsertWriter,
)


def utterance_writer(*, repository: Repository, source: str, use_copy: bool | None = None) -> UtteranceWriter:
    """The writer for this database (COPY on PostgreSQL unless ``use_copy`` is False)."""
    for writer in WRITERS:
        if writer.vendor == connection.vendor and use_copy in (None, writer.copy) and writer.claim():
            return writer(repository=repository, source=source)
    raise UserError(f"no utterance writer for {connection.vendor} with use_copy={use_copy}")
