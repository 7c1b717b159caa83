"""import_repository: stream an utterance repository into the database in bounded memory.

Formats: ``lines`` (one utterance per line, OpenSubtitles raw style, .gz too),
``cornell`` (Cornell Movie-Dialogs movie_lines.txt, `` +++$+++ ``-separated fields) and
``dailydialog`` (every turn of DailyDialog's ``__eou__``-separated dialogues).

Utterances are de-duplicated by normalised text within the repository (the database's
unique constraint does it, so memory does not grow with the file). Importing into an
existing repository adds to it (a file of utterances it already holds adds nothing). The whole
import is one transaction; a file in which no utterance passes the filters (empty, or every line
skipped) is an error that creates nothing.
"""

from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from annotation.models import Repository, Utterance
from core.errors import ImportFileError, UserError
from core.lines import LineReader, RawLine, decode_field, encoding_check
from core.names import slug_check
from core.services.jobs import JobProgress
from core.text import clean_text, count_tokens, strip_formatting_tags, text_hash
from retrieval.services.exclusions import excluded_hashes

FORMATS = ("lines", "cornell", "dailydialog")
_CORNELL_SEP = b" +++$+++ "
_EOU = b"__eou__"


def repository_name_check(*, name: str) -> str:
    return slug_check(name=name, what="repository")


def repository_import(
    *,
    path: Path,
    name: str,
    fmt: str = "lines",
    min_tokens: int = 1,
    exclude_datasets: list[str] | None = None,
    encoding: str = "utf-8",
    use_copy: bool | None = None,
    progress: JobProgress | None = None,
) -> dict:
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    repository_name_check(name=name)
    encoding_check(encoding=encoding)
    path = Path(path)
    max_chars = settings.WELLCHOSEN_MAX_UTTERANCE_CHARS
    # DailyDialog lines hold whole dialogues; other formats one utterance (plus Cornell's ids).
    reader = LineReader(path, max_bytes=max_chars * 4 * (64 if fmt == "dailydialog" else 1) + 256)
    if use_copy is None:
        use_copy = connection.vendor == "postgresql"
    report = {
        "repository": name,
        "format": fmt,
        "lines": 0,
        "utterances_read": 0,
        "inserted": 0,
        "duplicates": 0,
        "skipped_blank": 0,
        "skipped_short": 0,
        "skipped_too_long": 0,
        "skipped_excluded": 0,
        "skipped_unterminated_last_line": 0,
    }
    kept = 0  # utterances that passed every filter: inserted now, or already in the repository
    with transaction.atomic():
        repository, _ = Repository.objects.get_or_create(name=name)
        excluded = excluded_hashes(exclude_datasets or [])
        batch: dict[str, tuple] = {}
        for line in reader:
            report["lines"] += 1
            if line.too_long:
                report["skipped_too_long"] += 1
                continue
            if not line.terminated and line.number > 1:
                # A multi-line file whose last line lacks its newline was cut off (a partial
                # download): the utterance on it may be cut mid-sentence, so it is not kept.
                report["skipped_unterminated_last_line"] += 1
                continue
            for text, source_ref in _utterances(line, fmt=fmt, path=path, encoding=encoding):
                report["utterances_read"] += 1
                text = clean_text(strip_formatting_tags(text))
                if not text:
                    report["skipped_blank"] += 1
                    continue
                if len(text) > max_chars:
                    report["skipped_too_long"] += 1
                    continue
                n_tokens = count_tokens(text)
                if n_tokens < min_tokens:
                    report["skipped_short"] += 1
                    continue
                digest = text_hash(text)
                if digest in excluded:
                    report["skipped_excluded"] += 1
                    continue
                kept += 1
                if digest not in batch:
                    batch[digest] = (text, digest, min(n_tokens, 32767), path.name[:255], line.number, source_ref[:64])
            if len(batch) >= settings.WELLCHOSEN_IMPORT_BATCH_SIZE:
                report["inserted"] += _insert(repository, list(batch.values()), use_copy=use_copy)
                batch = {}
            if progress:
                reader.report(progress)
        if progress:
            reader.report(progress, force=True)
        if batch:
            report["inserted"] += _insert(repository, list(batch.values()), use_copy=use_copy)
        if kept == 0:
            raise UserError(f"{path.name}: no utterance to import ({_skips(report)}); nothing was imported")
        if report["inserted"]:
            # search indexes built before this import are now stale
            Repository.objects.filter(pk=repository.pk).update(content_version=F("content_version") + 1)
    report["duplicates"] = kept - report["inserted"]
    report["repository_size"] = Utterance.objects.filter(repository=repository).count()
    return report


_SKIPPED = {
    "skipped_blank": "blank",
    "skipped_short": "under --min-tokens",
    "skipped_too_long": "too long",
    "skipped_excluded": "in an excluded dataset",
    "skipped_unterminated_last_line": "a cut-off last line",
}


def _skips(report: dict) -> str:
    return ", ".join(
        [f"{report['lines']} lines"] + [f"{report[key]} {what}" for key, what in _SKIPPED.items() if report[key]]
    )


def _utterances(line: RawLine, *, fmt: str, path: Path, encoding: str) -> Iterator[tuple[str, str]]:
    if fmt == "lines":
        yield decode_field(line.data, path=path, line=line.number, field="text", encoding=encoding), ""
    elif fmt == "cornell":
        fields = line.data.split(_CORNELL_SEP, 4)
        if len(fields) != 5:
            if not line.data.strip():
                return
            raise ImportFileError(
                path,
                line.number,
                "text",
                f"expected 5 fields separated by ' +++$+++ ' (lineID, characterID, movieID, "
                f"character, text), found {len(fields)}",
            )
        line_id = decode_field(fields[0], path=path, line=line.number, field="lineID", encoding=encoding).strip()
        yield decode_field(fields[4], path=path, line=line.number, field="text", encoding=encoding), line_id
    else:
        pieces = line.data.split(_EOU)
        if pieces[-1].strip():
            raise ImportFileError(
                path, line.number, f"turn {len(pieces)}", "text after the last __eou__ (is this DailyDialog?)"
            )
        for i, piece in enumerate(pieces[:-1], start=1):
            yield decode_field(piece, path=path, line=line.number, field=f"turn {i}", encoding=encoding), f"turn {i}"


_COLUMNS = "repository_id, text, text_hash, n_tokens, source, source_line, source_ref"


def _insert(repository: Repository, rows: list[tuple], *, use_copy: bool) -> int:
    """Insert the batch, ignoring texts already in the repository; returns how many were new.

    Plain SQL on purpose: building a model instance per row costs more than the insert
    itself at millions of rows.
    """
    if use_copy:
        return _insert_copy(repository, rows)
    table = Utterance._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT total_changes()")
            before = cursor.fetchone()[0]
            cursor.executemany(
                f"INSERT OR IGNORE INTO {table} ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [(repository.pk, *row) for row in rows],
            )
            # Rows skipped by the conflict clause are not counted by SQLite's counter.
            cursor.execute("SELECT total_changes()")
            return cursor.fetchone()[0] - before
        inserted = 0
        for start in range(0, len(rows), 1000):
            chunk = rows[start : start + 1000]
            placeholders = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(chunk))
            cursor.execute(
                f"INSERT INTO {table} ({_COLUMNS}) VALUES {placeholders} "
                "ON CONFLICT (repository_id, text_hash) DO NOTHING",
                [value for row in chunk for value in (repository.pk, *row)],
            )
            inserted += cursor.rowcount
        return inserted


_STAGE = "wellchosen_utterance_stage"


def _insert_copy(repository: Repository, rows: list[tuple]) -> int:
    """PostgreSQL: COPY the batch into a temporary table, then insert what is new."""
    table = Utterance._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {_STAGE} (text text, text_hash varchar(32), n_tokens smallint, "
            "source varchar(255), source_line integer, source_ref varchar(64)) ON COMMIT DROP"
        )
        with cursor.cursor.copy(
            f"COPY {_STAGE} (text, text_hash, n_tokens, source, source_line, source_ref) FROM STDIN"
        ) as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute(
            f"INSERT INTO {table} ({_COLUMNS}) "
            f"SELECT %s, text, text_hash, n_tokens, source, source_line, source_ref FROM {_STAGE} "
            "ON CONFLICT (repository_id, text_hash) DO NOTHING",
            [repository.pk],
        )
        inserted = cursor.rowcount
        cursor.execute(f"TRUNCATE {_STAGE}")
    return inserted
