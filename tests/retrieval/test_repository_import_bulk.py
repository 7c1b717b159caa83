"""The two PostgreSQL paths of a repository import: the bulk load into an empty utterance table
(indexes and constraints built after) and the incremental one beside other repositories."""

import pytest
from django.db import IntegrityError, connection, transaction

from annotation.models import Repository, Utterance
from retrieval.services import import_writers
from retrieval.services.repository_import import repository_import

postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="the PostgreSQL writers")


@pytest.fixture
def chosen_writers(monkeypatch) -> list[str]:
    """The class of the writer of each import."""
    chosen = []

    def recording_writer(**kwargs):
        writer = import_writers.utterance_writer(**kwargs)
        chosen.append(type(writer).__name__)
        return writer

    monkeypatch.setattr("retrieval.services.repository_import.utterance_writer", recording_writer)
    return chosen


def rows(name: str) -> list[tuple]:
    return list(
        Utterance.objects.filter(repository__name=name)
        .order_by("id")
        .values_list("text", "text_hash", "n_tokens", "source", "source_line", "source_ref")
    )


def table_schema() -> tuple[list, list]:
    """The utterance table's indexes and constraints, as PostgreSQL defines them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'retrieval_utterance' ORDER BY 1")
        indexes = cursor.fetchall()
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid), convalidated, condeferrable, condeferred FROM pg_constraint "
            "WHERE conrelid = 'retrieval_utterance'::regclass ORDER BY 1"
        )
        return indexes, cursor.fetchall()


def film(n: int) -> str:
    # every tenth line repeats an earlier one, across batches of 50
    return "".join(f"Line {i % 90 if i % 10 == 9 else i} of the film.\n" for i in range(n))


@postgres_only
def test_the_bulk_load_gives_the_rows_of_the_incremental_import(db, write_file, settings, chosen_writers):
    # given a file whose repeated texts fall in other batches than their first line
    settings.WELLCHOSEN_IMPORT_BATCH_SIZE = 50
    path = write_file("s.txt", film(1000))
    # when it is imported into the empty table and then into a second repository beside the first
    first = repository_import(path=path, name="first")
    second = repository_import(path=path, name="second")
    # then the bulk load and the incremental import kept the same first lines, in the same order
    assert chosen_writers == ["PostgresBulkWriter", "PostgresCopyWriter"]
    assert rows("first") == rows("second")
    assert {key: value for key, value in first.items() if key != "repository"} == {
        key: value for key, value in second.items() if key != "repository"
    }
    assert first["duplicates"] > 0 and first["inserted"] == Utterance.objects.filter(repository__name="first").count()


@postgres_only
def test_several_utterances_of_one_line_keep_their_order_in_the_bulk_load(db, write_file, chosen_writers):
    # given DailyDialog lines of several turns each, some repeated
    path = write_file("d.txt", "Hi. __eou__ Hello. __eou__ How are you? __eou__\nFine. __eou__ Hi. __eou__\n")
    # when it is loaded into the empty table and imported beside it, then both keep the same turns
    repository_import(path=path, name="first", fmt="dailydialog")
    repository_import(path=path, name="second", fmt="dailydialog")
    assert chosen_writers == ["PostgresBulkWriter", "PostgresCopyWriter"]
    assert [row[0] for row in rows("first")] == ["Hi.", "Hello.", "How are you?", "Fine."]
    assert rows("first") == rows("second")


@postgres_only
def test_an_import_into_the_loaded_repository_de_duplicates_against_it(db, write_file, chosen_writers):
    repository_import(path=write_file("a.txt", film(300)), name="subs")
    report = repository_import(path=write_file("b.txt", "Line 5 of the film.\nA new line.\n"), name="subs")
    assert chosen_writers == ["PostgresBulkWriter", "PostgresCopyWriter"]
    assert (report["inserted"], report["duplicates"]) == (1, 1)
    assert Utterance.objects.filter(repository__name="subs", text="Line 5 of the film.").count() == 1


@postgres_only
def test_the_bulk_load_leaves_the_tables_indexes_and_constraints_as_they_were(db, write_file):
    before = table_schema()
    repository_import(path=write_file("s.txt", film(200)), name="subs")
    assert table_schema() == before


@postgres_only
def test_an_error_in_the_bulk_load_leaves_the_table_as_it_was(db, write_file, settings, chosen_writers):
    settings.WELLCHOSEN_IMPORT_BATCH_SIZE = 50
    before = table_schema()
    with pytest.raises(Exception, match="undecodable bytes"):
        repository_import(path=write_file("s.txt", film(500).encode() + b"caf\xe9\n"), name="subs")
    assert chosen_writers == ["PostgresBulkWriter"]
    assert table_schema() == before and not Utterance.objects.exists() and not Repository.objects.exists()


@postgres_only
def test_the_foreign_key_is_checked_again_after_either_import(db, write_file):
    repository_import(path=write_file("a.txt", "Hello there.\n"), name="subs")
    repository_import(path=write_file("b.txt", "Good night.\n"), name="subs")
    with connection.cursor() as cursor:
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"
    utterance = Utterance.objects.get(text="Good night.")
    with pytest.raises(IntegrityError), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        Utterance.objects.create(
            repository_id=utterance.repository_id + 1000,
            text="Orphan.",
            text_hash="0" * 32,
            n_tokens=1,
            source_line=1,
        )


def test_every_path_keeps_the_first_line_of_each_text(db, write_file, settings):
    # on SQLite as on PostgreSQL: a repeated text keeps the line where it first came
    settings.WELLCHOSEN_IMPORT_BATCH_SIZE = 50
    repository_import(path=write_file("s.txt", film(1000)), name="subs")
    lines = dict(Utterance.objects.values_list("text", "source_line"))
    assert lines["Line 9 of the film."] == 10 and lines["Line 89 of the film."] == 90
    assert len(lines) == len({text for text in film(1000).splitlines()})
