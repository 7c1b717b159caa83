"""The link provider: a signed URL per batch, workers arrive with their id, score units, get the
completion code; the platform's approvals CSV comes back in one transaction."""

import re

import pytest
from django.urls import reverse

from annotation.models import Annotator, Score
from core.errors import ImportFileError
from crowd.models import CrowdAssignment
from crowd.providers.link import link_token, link_url
from crowd.services.review import link_approvals_import

from .link_helpers import work_through


def test_publishing_a_link_batch_gives_a_signed_url_and_a_completion_code(link_batch):
    assert link_batch.status == "published" and re.fullmatch(r"[0-9A-F]{8}", link_batch.completion_code)
    assert link_url(batch=link_batch).startswith("https://wellchosen.example.org/crowd/l/")


def test_a_worker_scores_their_units_and_gets_the_completion_code(client, link_batch):
    page = work_through(client, link_batch).content.decode()
    assert link_batch.completion_code in page
    worker = Annotator.objects.get(provider="link", external_id="P1")
    assert worker.user is None
    assert Score.objects.filter(annotator=worker).count() == 4  # 2 units x 2 responses
    refs = set(Score.objects.values_list("assignment_ref", flat=True))
    assert refs == set(CrowdAssignment.objects.values_list("external_id", flat=True))
    assert set(CrowdAssignment.objects.values_list("status", flat=True)) == {"submitted"}


def test_a_tampered_link_is_refused(client, link_batch):
    token = link_token(batch=link_batch)
    response = client.get(reverse("crowd-link", args=[token[:-2] + "xx"]), {"worker": "P1"})
    assert response.status_code == 403 and not Annotator.objects.exists()


def test_a_link_without_a_worker_id_is_refused(client, link_batch):
    response = client.get(reverse("crowd-link", args=[link_token(batch=link_batch)]))
    assert response.status_code == 403 and "worker id" in response.content.decode()


def test_prolific_style_pid_parameter_is_accepted(client, link_batch):
    client.get(reverse("crowd-link", args=[link_token(batch=link_batch)]), {"PROLIFIC_PID": "5f1a2b"})
    assert Annotator.objects.filter(provider="link", external_id="5f1a2b").exists()


def test_approvals_csv_marks_each_workers_submissions(client, link_batch, write_file):
    work_through(client, link_batch, worker="P1")
    client.cookies.clear()
    work_through(client, link_batch, worker="P2")
    path = write_file(
        "approvals.csv", "\ufeffParticipant id,Status,feedback\r\nP1,APPROVED,\r\nP2,REJECTED,too fast\r\n"
    )
    counts = link_approvals_import(batch=link_batch, path=path)
    statuses = dict(CrowdAssignment.objects.values_list("worker__external_id", "status").distinct())
    assert statuses == {"P1": "approved", "P2": "rejected"} and counts["approved"] == 2


def test_a_bad_approvals_line_names_file_line_and_field_and_changes_nothing(client, link_batch, write_file):
    work_through(client, link_batch, worker="P1")
    path = write_file("approvals.csv", "worker_id,status\nP1,APPROVED\nP1,maybe\n")
    with pytest.raises(ImportFileError, match=r"approvals.csv, line 3, field status: status 'maybe'"):
        link_approvals_import(batch=link_batch, path=path)
    assert set(CrowdAssignment.objects.values_list("status", flat=True)) == {"submitted"}


def test_an_approvals_csv_without_an_id_column_is_refused(link_batch, write_file):
    path = write_file("approvals.csv", "name,status\nP1,APPROVED\n")
    with pytest.raises(ImportFileError, match="line 1, field header: no worker id column"):
        link_approvals_import(batch=link_batch, path=path)


def test_an_unknown_worker_in_the_approvals_is_an_error(client, link_batch, write_file):
    path = write_file("approvals.csv", "worker_id,status\nNOBODY,APPROVED\n")
    with pytest.raises(ImportFileError, match="line 2, field worker_id: worker NOBODY has no submission"):
        link_approvals_import(batch=link_batch, path=path)


def test_an_approvals_row_with_more_fields_than_the_header_is_refused(client, link_batch, write_file):
    work_through(client, link_batch, worker="P1")
    path = write_file("approvals.csv", "worker_id,status\nP1,APPROVED,oops\n")
    with pytest.raises(ImportFileError, match=r"approvals.csv, line 2: expected 2 comma-separated fields"):
        link_approvals_import(batch=link_batch, path=path)
    assert set(CrowdAssignment.objects.values_list("status", flat=True)) == {"submitted"}


def test_a_nul_in_approvals_feedback_is_refused_on_every_database(client, link_batch, write_file):
    work_through(client, link_batch, worker="P1")
    path = write_file("approvals.csv", "worker_id,status,feedback\nP1,REJECTED,too\x00fast\n")
    with pytest.raises(ImportFileError, match=r"line 2, field feedback: holds a NUL character"):
        link_approvals_import(batch=link_batch, path=path)
    assert set(CrowdAssignment.objects.values_list("status", flat=True)) == {"submitted"}


def test_a_worker_approved_and_rejected_in_one_file_is_refused(client, link_batch, write_file):
    work_through(client, link_batch, worker="P1")
    path = write_file("approvals.csv", "worker_id,status\nP1,APPROVED\nP1,APPROVED\nP1,REJECTED\n")
    with pytest.raises(
        ImportFileError, match=r"line 4, field worker_id: worker P1 is approved on line 2, rejected here"
    ):
        link_approvals_import(batch=link_batch, path=path)
    assert set(CrowdAssignment.objects.values_list("status", flat=True)) == {"submitted"}


def test_an_approvals_feedback_may_span_lines(client, link_batch, write_file):
    work_through(client, link_batch, worker="P1")
    path = write_file("approvals.csv", 'worker_id,status,feedback\nP1,REJECTED,"too fast,\nsorry"\n')
    link_approvals_import(batch=link_batch, path=path)
    assert set(CrowdAssignment.objects.values_list("feedback", flat=True)) == {"too fast,\nsorry"}


def test_a_worker_id_with_a_trailing_newline_is_refused(client, link_batch):
    response = client.get(reverse("crowd-link", args=[link_token(batch=link_batch)]), {"worker": "P1\n"})
    assert response.status_code == 403 and "worker id" in response.content.decode()
    assert not Annotator.objects.exists()
