import pytest
from django.urls import reverse

from annotation.models import Repository, Utterance
from core.errors import UserError
from core.models import JobStatus
from core.text import count_tokens, text_hash
from retrieval.job_params import ImportRepositoryParams
from retrieval.services.repository_import import repository_import
from tests.admin_jobs import post_and_run, upload

DAILYDIALOG = "Say , Jim , how about ... ? __eou__ I ’ m busy . __eou__ OK __eou__\n"


def rows(name: str = "subs") -> list[tuple]:
    return list(
        Utterance.objects.filter(repository__name=name)
        .order_by("id")
        .values_list("text", "original_text", "text_hash", "n_tokens")
    )


def test_detokenize_rewrites_the_lines_the_batch_path_takes(db, write_file):
    path = write_file("subs.txt", "Where were you ?\nI was at home .\nFine.\n")
    repository_import(path=path, name="subs", normaliser="detokenize")
    assert [(text, original) for text, original, _, _ in rows()] == [
        ("Where were you?", "Where were you ?"),
        ("I was at home.", "I was at home ."),
        ("Fine.", ""),
    ]


def test_a_rewritten_text_gets_its_own_word_count_and_hash(db, write_file):
    repository_import(path=write_file("subs.txt", "I do n't know .\n"), name="subs", normaliser="detokenize")
    [(text, _, digest, n_tokens)] = rows()
    assert (text, digest, n_tokens) == ("I don't know.", text_hash("I don't know."), count_tokens("I don't know."))


def test_the_batch_path_and_the_one_by_one_path_normalise_alike(db, write_file):
    # the curly apostrophe and the "<" send these lines one by one; the others go through core.text_batch
    lines = ["I ’ m busy .", "<i>Where were you ?</i>", "I ' m busy too .", "Where are you ?"]
    repository_import(path=write_file("subs.txt", "\n".join(lines) + "\n"), name="subs", normaliser="detokenize")
    assert [text for text, *_ in rows()] == ["I'm busy.", "Where were you?", "I'm busy too.", "Where are you?"]


def test_texts_that_meet_after_normalising_are_kept_once(db, write_file):
    report = repository_import(
        path=write_file("subs.txt", "Hello , there .\nHello, there.\n"), name="subs", normaliser="detokenize"
    )
    assert [text for text, *_ in rows()] == ["Hello, there."]
    assert report["duplicates"] == 1


def test_the_report_counts_the_texts_the_normaliser_changed(db, write_file):
    report = repository_import(
        path=write_file("subs.txt", "Where were you ?\n\nFine.\nI ’ m here .\n"), name="subs", normaliser="detokenize"
    )
    assert (report["normaliser"], report["normaliser_version"]) == ("detokenize", 1)
    assert (report["texts_seen"], report["texts_changed"]) == (3, 2)


def test_subtitles_on_a_dailydialog_and_a_cornell_file(db, write_file):
    repository_import(
        path=write_file("m.txt", "L1 +++$+++ u0 +++$+++ m0 +++$+++ A +++$+++ <i>- Hi. - Hello.</i>\n"),
        name="movies",
        fmt="cornell",
        normaliser="subtitles",
    )
    # the original is what the import stores without a normaliser: formatting tags are never kept
    assert [(text, original) for text, original, *_ in rows("movies")] == [("Hi. Hello.", "- Hi. - Hello.")]
    repository_import(path=write_file("d.txt", DAILYDIALOG), name="dd", fmt="dailydialog", normaliser="detokenize")
    assert [text for text, *_ in rows("dd")] == ["Say, Jim, how about...?", "I'm busy.", "OK"]


def test_a_text_that_was_only_markup_is_skipped_as_blank(db, write_file):
    report = repository_import(
        path=write_file("subs.txt", "[LAUGHS]\n♪ ♪\nWho's there?\n"), name="subs", normaliser="subtitles"
    )
    assert report["skipped_blank"] == 2 and [text for text, *_ in rows()] == ["Who's there?"]


def test_without_a_normaliser_no_original_is_kept(db, write_file):
    report = repository_import(path=write_file("subs.txt", "Where were you ?\n"), name="subs")
    assert rows()[0][:2] == ("Where were you ?", "")
    assert report["normaliser"] == "none" and "texts_seen" not in report


def test_the_repository_records_its_normaliser_and_refuses_another(db, write_file):
    repository_import(path=write_file("a.txt", "Hi there .\n"), name="subs", normaliser="standard")
    repository = Repository.objects.get(name="subs")
    assert (repository.text_normaliser, repository.text_normaliser_version) == ("standard", 1)
    with pytest.raises(UserError, match="repository 'subs' holds texts imported with normaliser standard v1"):
        repository_import(path=write_file("b.txt", "Bye now .\n"), name="subs", normaliser="detokenize")
    assert Utterance.objects.count() == 1


def test_the_upload_form_starts_a_normalised_import(admin_client, django_capture_on_commit_callbacks):
    job = post_and_run(
        admin_client,
        reverse("admin:retrieval_repository_import"),
        {
            "file": upload("subs.txt", "One line .\n"),
            "name": "subs",
            "format": "lines",
            "min_tokens": 1,
            "normaliser": "detokenize",
        },
        django_capture_on_commit_callbacks,
    )
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert [text for text, *_ in rows()] == ["One line."]


def test_the_job_summary_says_what_the_normaliser_changed(db, write_file):
    path = write_file("subs.txt", "One line .\nTwo.\n")
    result = repository_import(path=path, name="subs", normaliser="detokenize")
    summary = ImportRepositoryParams(path=str(path), name="subs", normaliser="detokenize").summary(result)
    assert "from subs.txt (2 lines); normaliser detokenize v1 changed 1 of 2 texts; it holds 2 utterances." in summary


def test_the_upload_form_refuses_an_unknown_normaliser(admin_client):
    response = admin_client.post(
        reverse("admin:retrieval_repository_import"),
        {
            "file": upload("subs.txt", "One line.\n"),
            "name": "subs",
            "format": "lines",
            "min_tokens": 1,
            "normaliser": "x",
        },
    )
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not Repository.objects.exists()


def test_the_repository_list_shows_the_normaliser(admin_client, write_file):
    repository_import(path=write_file("a.txt", "Hi there .\n"), name="subs", normaliser="detokenize")
    page = admin_client.get(reverse("admin:annotation_repository_changelist")).content.decode()
    assert "detokenize v1" in page


@pytest.mark.parametrize("use_copy", [None, False])
def test_every_writer_keeps_the_originals(db, write_file, use_copy):
    # another repository first: the table is not empty, so PostgreSQL takes its incremental writers
    repository_import(path=write_file("other.txt", "Something else.\n"), name="other")
    repository_import(
        path=write_file("subs.txt", "Where\tare you ?\nHere.\n"),
        name="subs",
        normaliser="detokenize",
        use_copy=use_copy,
    )
    assert [(text, original) for text, original, *_ in rows()] == [("Where are you?", "Where are you ?"), ("Here.", "")]
