"""The shortcut audit on the pages: the dataset workspace's step and the test set's admin page show
the newest stored audit (each baseline's accuracy and interval, flagged above chance), and start a
new one as a job; they read it, never recompute it."""

import re

import pytest
from django.urls import reverse

from core.models import Job, JobStatus
from tests.admin_jobs import post_and_run
from tests.factories import DatasetFactory, staff_with
from tests.testsets.shortcut_sets import length_shortcut, no_shortcut
from tests.testsets.test_shortcut_audit import dataset_with
from testsets.models import ShortcutAudit, TestSet
from testsets.services.build import testset_build
from testsets.services.shortcut_audit import shortcut_audit_run
from testsets.shortcuts.baselines import SurfaceClassifier
from testsets.workspace import shortcuts_state

GOOD, WRONG = [5, 5, 4, 5, 5], [1, 1, 2, 1, 1]
SURFACE_CLASSIFIER = SurfaceClassifier.label


def step(client, name: str) -> str:
    html = client.get(reverse("dashboard-dataset", args=[name])).content.decode()
    match = re.search(r'<li class="step step-(\w+)" id="step-shortcuts">(.*?)</li>', html, re.S)
    assert match, "no shortcuts step"
    return f"status={match.group(1)} {match.group(2)}"


def flagged_rows(html: str) -> list[str]:
    return re.findall(r'<tr class="flagged"><td>([^<]+)</td>', html)


def test_the_workspace_offers_the_audit_of_pools_not_yet_audited(admin_client, db):
    dataset_with("ws", length_shortcut(8))
    html = step(admin_client, "ws")
    assert "status=optional" in html and "Not audited yet" in html
    assert reverse("admin:annotation_dataset_shortcut-audit", args=[DatasetFactory(name="ws").pk]) in html


def test_the_workspace_shows_the_newest_audit_with_its_shortcuts_flagged(admin_client, db):
    dataset_with("ws", length_shortcut(12))
    shortcut_audit_run(dataset_name="ws")
    html = step(admin_client, "ws")
    assert "status=done" in html and "2 context-free baselines pick the ground truth above chance" in html
    assert flagged_rows(html) == ["longest reply", SURFACE_CLASSIFIER]
    assert "100.0 %" in html and "75.8 % to 100.0 %" in html


def test_a_dataset_without_a_shortcut_is_shown_within_chance(admin_client, db):
    dataset_with("ws", no_shortcut())
    shortcut_audit_run(dataset_name="ws")
    html = step(admin_client, "ws")
    assert "every context-free baseline is within chance" in html and flagged_rows(html) == []


def test_the_step_reads_one_query_however_many_audits_and_questions(db, django_assert_num_queries):
    dataset_with("ws", length_shortcut(6))
    shortcut_audit_run(dataset_name="ws")
    dataset = DatasetFactory(name="ws")
    shortcuts_state(dataset)  # the corpus counts, shared with the other steps through the memo
    with django_assert_num_queries(1):
        shortcuts_state(dataset)
    dataset_with("ws", length_shortcut(20, seed=9))
    for _ in range(3):
        shortcut_audit_run(dataset_name="ws")
    with django_assert_num_queries(1):
        state = shortcuts_state(dataset)
    assert state.numbers[0].value == 26


def test_the_dataset_page_starts_the_audit_as_a_job(admin_client, db, django_capture_on_commit_callbacks):
    dataset_with("ws", length_shortcut(10))
    url = reverse("admin:annotation_dataset_shortcut-audit", args=[DatasetFactory(name="ws").pk])
    assert admin_client.get(url).status_code == 200
    job = post_and_run(admin_client, url, {"folds": 3, "seed": 2}, django_capture_on_commit_callbacks)
    assert job.status == JobStatus.SUCCEEDED, job.error
    audit = ShortcutAudit.objects.get()
    assert audit.dataset.name == "ws" and (audit.result["folds"], audit.result["seed"]) == (3, 2)


def test_the_audit_page_refuses_an_unknown_system_with_a_400(admin_client, db):
    dataset_with("ws", length_shortcut(4))
    url = reverse("admin:annotation_dataset_shortcut-audit", args=[DatasetFactory(name="ws").pk])
    response = admin_client.post(url, {"folds": 5, "seed": 0, "system": "nope"})
    assert response.status_code == 400 and "no system" in response.content.decode()
    assert not Job.objects.exists()


@pytest.fixture
def release(db, scored_question) -> TestSet:
    dataset = DatasetFactory(name="rel-ds")
    for _ in range(8):
        scored_question(dataset=dataset, gt=GOOD, false=[WRONG] * 3)
    return testset_build(dataset_name="rel-ds", name="rel", seed=1)


def test_the_test_set_page_shows_the_audit_its_manifest_recorded(admin_client, release):
    html = admin_client.get(reverse("admin:testsets_testset_change", args=[release.pk])).content.decode()
    assert "recorded in the manifest at build" in html and "longest reply" in flagged_rows(html)


def test_the_test_set_page_shows_the_newest_stored_audit_instead(admin_client, release):
    shortcut_audit_run(testset_name="rel", folds=3)
    url = reverse("admin:testsets_testset_change", args=[release.pk])
    html = admin_client.get(url).content.decode()
    assert "audit of " in html and "recorded in the manifest" not in html


def test_the_test_set_pages_query_count_does_not_grow_with_its_audits(admin_client, release):
    url = reverse("admin:testsets_testset_change", args=[release.pk])
    admin_client.get(url)  # the session and the site's caches are warm
    before = queries_of(admin_client, url)
    for folds in (2, 3, 4):
        shortcut_audit_run(testset_name="rel", folds=folds)
    assert queries_of(admin_client, url) == before


def queries_of(client, url) -> list[str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    return [re.sub(r"\d+", "N", q["sql"]) for q in queries]


def test_the_test_set_page_starts_an_audit_of_the_test_set(admin_client, release, django_capture_on_commit_callbacks):
    url = reverse("admin:testsets_testset_audit", args=[release.pk])
    job = post_and_run(admin_client, url, {"folds": 5, "seed": 0}, django_capture_on_commit_callbacks)
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert ShortcutAudit.objects.get().testset == release


def test_a_release_built_before_the_audit_says_it_was_not_audited(admin_client, release):
    manifest = {k: v for k, v in release.manifest.items() if k != "shortcut_audit"}
    TestSet.objects.filter(pk=release.pk).update(manifest=manifest)
    html = admin_client.get(reverse("admin:testsets_testset_change", args=[release.pk])).content.decode()
    assert "Not audited (built before the audit existed)." in html


def test_staff_without_the_audit_permission_cannot_start_one(client, release):
    client.force_login(staff_with("testsets.view_testset", "annotation.view_dataset"))
    assert client.get(reverse("admin:testsets_testset_audit", args=[release.pk])).status_code == 403
    dataset_page = reverse("admin:annotation_dataset_shortcut-audit", args=[release.dataset_id])
    assert client.post(dataset_page, {"folds": 5, "seed": 0}).status_code == 403
    assert not Job.objects.exists()
