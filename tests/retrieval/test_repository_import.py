import gzip
import json
import tracemalloc
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.urls import reverse

from annotation.models import Candidate, Repository, Turn, Utterance
from annotation.services.dialogue_import import dialogues_import
from core.errors import ImportFileError, UserError
from core.models import Job
from core.text import count_tokens, text_hash
from retrieval.services.repository_import import repository_import

CORNELL_SEP = " +++$+++ "


def cornell_line(n: int, text: str) -> str:
    return CORNELL_SEP.join([f"L{n}", "u0", "m0", "BIANCA", text])


def texts(name: str = "subs") -> list[str]:
    return list(Utterance.objects.filter(repository__name=name).order_by("id").values_list("text", flat=True))


def test_lines_are_imported_deduplicated_by_normalised_text(db, write_file):
    path = write_file("subs.txt", "Where were you?\nwhere were you\nI was at home.\n\nWHERE WERE YOU ?!\n")
    report = repository_import(path=path, name="subs")
    assert texts() == ["Where were you?", "I was at home."]
    assert (report["inserted"], report["duplicates"], report["skipped_blank"]) == (2, 2, 1)
    first = Utterance.objects.get(text="Where were you?")
    assert (first.source, first.source_line, first.n_tokens) == ("subs.txt", 1, 3)


def test_adding_a_second_file_keeps_one_copy_of_each_text(db, write_file):
    repository_import(path=write_file("a.txt", "Hello there.\nGood night.\n"), name="subs")
    report = repository_import(path=write_file("b.txt", "hello there\nSee you.\n"), name="subs")
    assert (report["inserted"], report["duplicates"], report["repository_size"]) == (1, 1, 3)


def test_gzipped_files_are_streamed(db, tmp_path):
    path = tmp_path / "en.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("One line.\nTwo lines.\n")
    repository_import(path=path, name="subs")
    assert texts() == ["One line.", "Two lines."]


def test_cornell_format_keeps_the_text_field_and_line_id(db, write_file):
    content = "\r\n".join([cornell_line(1045, "They do not!"), cornell_line(1044, "They do to!"), ""])
    repository_import(path=write_file("movie_lines.txt", content), name="subs", fmt="cornell")
    assert texts() == ["They do not!", "They do to!"]
    assert Utterance.objects.get(text="They do not!").source_ref == "L1045"


def test_cornell_line_with_missing_fields_is_an_error_naming_the_line(db, write_file):
    content = cornell_line(1, "Fine.") + "\nL2 +++$+++ u0 +++$+++ broken\n" + cornell_line(3, "Ok.") + "\n"
    with pytest.raises(ImportFileError, match=r"movie_lines.txt, line 2, field text: expected 5 fields"):
        repository_import(path=write_file("movie_lines.txt", content), name="subs", fmt="cornell")
    assert not Utterance.objects.exists() and not Repository.objects.exists()


def test_unterminated_last_line_is_treated_as_cut_off(db, write_file):
    # given a file whose last line lost its newline (a partial download, as in the Cornell sample)
    content = cornell_line(1, "Fine.") + "\r\n" + cornell_line(2, "I was ready for the next st")
    report = repository_import(path=write_file("movie_lines.txt", content), name="subs", fmt="cornell")
    assert texts() == ["Fine."]
    assert report["skipped_unterminated_last_line"] == 1


def test_formatting_tags_are_removed_and_other_markup_kept_as_text(db, write_file):
    repository_import(path=write_file("s.txt", "<i>I told you.</i>\nSay <script>alert(1)</script>\n"), name="subs")
    assert texts() == ["I told you.", "Say <script>alert(1)</script>"]


def test_short_and_over_long_utterances_are_skipped_and_counted(db, write_file, settings):
    settings.WELLCHOSEN_MAX_UTTERANCE_CHARS = 40
    content = "Yes.\nI will see you at the station tomorrow.\n" + "word " * 30 + "\n"
    report = repository_import(path=write_file("s.txt", content), name="subs", min_tokens=2)
    assert texts() == ["I will see you at the station tomorrow."]
    assert (report["skipped_short"], report["skipped_too_long"]) == (1, 1)


def test_utterances_of_excluded_datasets_are_left_out(db, write_file):
    # given a dataset whose context and ground truth include "Lunch?" and "Sure, where?"
    dialogues_import(
        path=write_file("d.jsonl", json.dumps({"context": ["Hi.", "Lunch?"], "response": "Sure, where?"}) + "\n"),
        fmt="jsonl",
        dataset_name="eval",
    )
    # when a repository containing them is imported excluding that dataset
    report = repository_import(
        path=write_file("s.txt", "lunch ?\nSure , where ?\nNot now.\n"), name="subs", exclude_datasets=["eval"]
    )
    # then only the unrelated utterance is kept
    assert texts() == ["Not now."]
    assert report["skipped_excluded"] == 2


def test_unknown_excluded_dataset_is_an_error(db, write_file):
    with pytest.raises(UserError, match="no dataset named nope"):
        repository_import(path=write_file("s.txt", "x y\n"), name="subs", exclude_datasets=["nope"])


def test_dailydialog_format_imports_every_turn(db, write_file):
    content = "Hello , Tom . __eou__ Hi ! __eou__ How are you ? __eou__\nHi ! __eou__ Bye . __eou__\n"
    report = repository_import(path=write_file("dialogues_train.txt", content), name="subs", fmt="dailydialog")
    assert texts() == ["Hello , Tom .", "Hi !", "How are you ?", "Bye ."]
    assert report["duplicates"] == 1
    assert Utterance.objects.get(text="How are you ?").source_ref == "turn 3"


def test_undecodable_bytes_are_an_error_naming_line_and_field(db, write_file):
    with pytest.raises(ImportFileError, match=r"s.txt, line 2, field text: undecodable bytes"):
        repository_import(path=write_file("s.txt", b"fine\ncaf\xe9\n"), name="subs")
    assert not Utterance.objects.exists()


def test_another_encoding_can_be_named(db, write_file):
    repository_import(path=write_file("s.txt", "caf\xe9 au lait\n".encode("latin-1")), name="subs", encoding="latin-1")
    assert texts() == ["café au lait"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="COPY is the PostgreSQL path")
def test_copy_and_plain_inserts_give_the_same_repository(db, write_file):
    content = "".join(f"Line {i % 700} of the film.\n" for i in range(2000))
    path = write_file("s.txt", content)
    copied = repository_import(path=path, name="copied", use_copy=True)
    plain = repository_import(path=path, name="plain", use_copy=False)
    assert copied["inserted"] == plain["inserted"] == 700
    assert texts("copied") == texts("plain")


@pytest.mark.shared_data
def test_real_cornell_sample_with_crlf_and_a_cut_last_line(db, shared_data):
    path = next((shared_data / "cornell_PARTIAL").glob("movie_lines*.txt"))
    report = repository_import(path=path, name="cornell", fmt="cornell")
    assert report["lines"] == 28676
    assert report["skipped_unterminated_last_line"] == 1
    assert report["inserted"] == Utterance.objects.count() > 20000
    assert not Utterance.objects.filter(text__contains="\r").exists()
    assert not Utterance.objects.filter(text__contains="<u>").exists()  # formatting tags stripped


def test_memory_does_not_grow_with_the_file(db, tmp_path, settings):
    # given a 3,000-line and a 30,000-line file of distinct utterances, imported in batches of 1,000
    settings.WELLCHOSEN_IMPORT_BATCH_SIZE = 1000

    def peak_for(n: int) -> int:
        path = tmp_path / f"{n}.txt"
        path.write_text("".join(f"Line {i} says something about trains and tickets.\n" for i in range(n)))
        tracemalloc.start()
        report = repository_import(path=path, name=f"r{n}")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert report["inserted"] == n
        return peak

    small, large = peak_for(3_000), peak_for(30_000)
    # then ten times the lines need about the same memory (one batch at a time), not ten times as much
    assert large < 1.5 * small + 1_000_000, (small, large)


@pytest.mark.shared_data
def test_real_dailydialog_train_split_without_the_test_dialogues(db, shared_data):
    # given the DailyDialog test split as a dataset
    dialogues_import(
        path=shared_data / "dailydialog/test/dialogues_test.txt", fmt="dailydialog", dataset_name="dd-test"
    )
    # when the train split becomes a repository that excludes it
    report = repository_import(
        path=shared_data / "dailydialog/train/dialogues_train.txt",
        name="dd-train",
        fmt="dailydialog",
        exclude_datasets=["dd-test"],
    )
    # then every train utterance was read, and none of the test contexts or ground truths is in it
    assert (report["lines"], report["utterances_read"]) == (11118, 87171)
    assert report["skipped_excluded"] > 0
    test_hashes = set(Turn.objects.values_list("text_hash", flat=True)) | set(
        Candidate.objects.values_list("text_hash", flat=True)
    )
    assert not Utterance.objects.filter(text_hash__in=test_hashes).exists()
    assert report["inserted"] == Utterance.objects.count() > 60000


@pytest.mark.parametrize("name", ["", "Subs", "two words"])
def test_repository_name_must_be_a_slug(db, write_file, name):
    with pytest.raises(UserError, match="repository name .* must be a slug"):
        repository_import(path=write_file("s.txt", "x y\n"), name=name)
    assert not Repository.objects.exists()


def test_the_upload_form_refuses_a_repository_name_before_starting_a_job(admin_client):
    response = admin_client.post(
        reverse("admin:retrieval_repository_import"),
        {"file": SimpleUploadedFile("s.txt", b"x y\n"), "name": "Subs", "format": "lines", "min_tokens": 1},
    )
    assert response.status_code == 200
    assert "repository name &#x27;Subs&#x27; must be a slug" in response.content.decode()
    assert not Job.objects.exists()


def test_duplicates_count_is_right_after_an_over_long_line(db, write_file, settings):
    # given an over-long line among three distinct utterances and one repeat
    settings.WELLCHOSEN_MAX_UTTERANCE_CHARS = 40
    content = "Hello there.\n" + "x" * 1000 + "\nGood night.\nhello there\n"
    report = repository_import(path=write_file("s.txt", content), name="subs")
    # then the long line is a skip, not a negative duplicate
    assert (report["inserted"], report["skipped_too_long"], report["duplicates"]) == (2, 1, 1)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"...\n?!\n"], ids=["empty", "blank", "no-words"])
def test_a_file_without_utterances_is_an_error_that_creates_no_repository(db, write_file, content):
    with pytest.raises(UserError, match=r"s.txt: no utterance to import \(\d+ lines.*\); nothing was imported"):
        repository_import(path=write_file("s.txt", content), name="subs")
    assert not Repository.objects.exists()


def test_the_command_fails_on_an_empty_file(db, write_file):
    with pytest.raises(CommandError, match="no utterance to import"):
        call_command("import_repository", str(write_file("s.txt", b"")), name="subs", stdout=StringIO())
    assert not Repository.objects.exists()


def test_a_file_of_known_utterances_adds_nothing_and_is_no_error(db, write_file):
    repository_import(path=write_file("a.txt", "Hello there.\n"), name="subs")
    report = repository_import(path=write_file("b.txt", "hello there\n"), name="subs")
    assert (report["inserted"], report["duplicates"], report["repository_size"]) == (0, 1, 1)


@pytest.mark.parametrize("use_copy", [False, True] if connection.vendor == "postgresql" else [False])
def test_a_nul_character_is_an_error_on_every_database_and_path(db, write_file, use_copy):
    # SQLite would store it and PostgreSQL refuse it: the import refuses it first, the same everywhere
    path = write_file("s.txt", b"Fine.\nTwo\x00words.\n")
    with pytest.raises(ImportFileError, match=r"s.txt, line 2, field text: holds a NUL character \(U\+0000\)"):
        repository_import(path=path, name="subs", use_copy=use_copy)
    assert not Repository.objects.exists()


def test_every_stored_utterance_has_the_hash_and_token_count_of_its_text(db, write_file):
    # given lines that take the batched path (ASCII, curly quotes, spaced apostrophes) and lines
    # that do not (accents, tags), duplicates across the two among them
    content = "\n".join(
        [
            "Don't worry , Jim .",
            "don ’ t worry, jim",
            "I’ll be there — soon…",
            "Café au lait ?",
            "<i>Run!</i>",
            "run",
            "`quoted` words",
            "...",
        ]
    )
    report = repository_import(path=write_file("s.txt", content + "\n"), name="subs")
    # then each row's hash and token count are core.text's for its text, duplicates are one row,
    # and a text without words ("...") is too short
    rows = list(Utterance.objects.order_by("id").values_list("text", "text_hash", "n_tokens"))
    assert [text for text, _, _ in rows] == [
        "Don't worry , Jim .",
        "I’ll be there — soon…",
        "Café au lait ?",
        "Run!",
        "`quoted` words",
    ]
    assert all(digest == text_hash(text) and n_tokens == count_tokens(text) for text, digest, n_tokens in rows)
    assert (report["inserted"], report["duplicates"], report["skipped_short"]) == (5, 2, 1)


def test_backslashes_and_copy_markers_are_stored_as_written(db, write_file):
    # given texts that COPY's text format would read otherwise, and a Cornell id with a backslash
    content = "\r\n".join(
        [
            cornell_line(1, "C:\\new\\table"),
            cornell_line(2, "\\N"),
            cornell_line(3, "\\."),
            "L4\\x +++$+++ u0 +++$+++ m0 +++$+++ A +++$+++ tab\tinside",
        ]
    )
    repository_import(path=write_file("movie_lines.txt", content + "\r\n"), name="subs", fmt="cornell", min_tokens=0)
    # then they come back as the file has them
    assert texts() == ["C:\\new\\table", "\\N", "\\.", "tab inside"]
    assert Utterance.objects.get(text="tab inside").source_ref == "L4\\x"


def test_an_error_after_several_batches_leaves_nothing_imported(db, write_file, settings):
    # given a file whose 1,001st line is undecodable, imported in batches of 100
    settings.WELLCHOSEN_IMPORT_BATCH_SIZE = 100
    content = b"".join(b"Line %d of the film.\n" % i for i in range(1000)) + b"caf\xe9\n"
    # when it is imported, then the error names the line and no batch written before it stays
    with pytest.raises(ImportFileError, match=r"s.txt, line 1001, field text: undecodable bytes"):
        repository_import(path=write_file("s.txt", content), name="subs")
    assert not Utterance.objects.exists() and not Repository.objects.exists()


@pytest.mark.parametrize("large", [False, True], ids=["read here", "read in a child process"])
def test_a_database_error_in_the_writer_stops_the_import(db, write_file, settings, monkeypatch, large):
    # given a writer whose third batch fails in the database
    from django.db import DatabaseError

    from retrieval.services import import_writers

    settings.WELLCHOSEN_IMPORT_BATCH_SIZE = 100
    settings.WELLCHOSEN_IMPORT_PARSE_PROCESS_MB = 0 if large else 1000
    writer = import_writers.utterance_writer
    calls = []

    def failing_writer(**kwargs):
        chosen = writer(**kwargs)
        write = chosen.write

        def failing(rows):
            calls.append(len(rows))
            if len(calls) == 3:
                raise DatabaseError("disk full")
            write(rows)

        chosen.write = failing
        return chosen

    monkeypatch.setattr("retrieval.services.repository_import.utterance_writer", failing_writer)
    content = "".join(f"Line {i} of the film.\n" for i in range(1000))
    # when a file of ten batches is imported, then the error comes back and nothing is imported
    with pytest.raises(DatabaseError, match="disk full"):
        repository_import(path=write_file("s.txt", content), name="subs")
    assert not Repository.objects.exists()
    assert len(calls) == 3  # no batch was written after the failure


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's page cache")
def test_the_sqlite_page_cache_is_given_back_after_the_import(db, write_file):
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA cache_size")
        before = cursor.fetchone()[0]
        repository_import(path=write_file("s.txt", "Hello there.\n"), name="subs")
        cursor.execute("PRAGMA cache_size")
        assert cursor.fetchone()[0] == before


def test_a_file_read_in_a_child_process_gives_the_same_repository(db, write_file, settings):
    # given a file with duplicates, long and cut lines, read here and (as a large file would be) in a child
    settings.WELLCHOSEN_IMPORT_BATCH_SIZE = 100
    settings.WELLCHOSEN_MAX_UTTERANCE_CHARS = 40
    content = "".join(f"Line {i % 700} of the film.\n" for i in range(2000)) + "x" * 300 + "\ncut"
    path = write_file("s.txt", content)
    here = repository_import(path=path, name="here")
    settings.WELLCHOSEN_IMPORT_PARSE_PROCESS_MB = 0
    child = repository_import(path=path, name="child")
    # then the reports and the rows are the same
    assert {**here, "repository": "child"} == child
    assert (child["inserted"], child["skipped_too_long"], child["skipped_unterminated_last_line"]) == (700, 1, 1)
    assert texts("here") == texts("child")


def test_an_error_in_the_child_process_is_the_imports_error(db, write_file, settings):
    # given a large file (read in a child process) whose 1,001st line is undecodable
    settings.WELLCHOSEN_IMPORT_BATCH_SIZE = 100
    settings.WELLCHOSEN_IMPORT_PARSE_PROCESS_MB = 0
    content = b"".join(b"Line %d of the film.\n" % i for i in range(1000)) + b"caf\xe9\n"
    # then the error names file, line and field, and nothing is imported
    with pytest.raises(ImportFileError, match=r"s.txt, line 1001, field text: undecodable bytes"):
        repository_import(path=write_file("s.txt", content), name="subs")
    assert not Repository.objects.exists()
