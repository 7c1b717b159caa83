import hashlib
import json

import pytest
from django.urls import reverse

from annotation.models import FilterRules, Question, Score
from core.models import Job, JobStatus
from tests.admin_jobs import post_and_run, upload
from tests.factories import DatasetFactory
from testsets.models import TestSet
from testsets.services.build import testset_build

GOOD_GT, WRONG = [5, 5, 4, 5, 5], [1, 1, 2, 1, 1]


@pytest.fixture
def scored_dataset(db, scored_question):
    dataset = DatasetFactory(name="adm")
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 3)
    scored_question(dataset=dataset, gt=[1, 1, 1, 5, 5], false=[WRONG] * 3)
    return dataset


def test_testset_and_scores_upload(admin_client, django_capture_on_commit_callbacks):
    tsv = "a\tb\tc\tgood\tx one\ty two\tz three\n"
    scores = json.dumps([GOOD_GT, WRONG, WRONG, WRONG]) + "\n"
    job = post_and_run(
        admin_client,
        reverse("admin:annotation_dataset_import_testset"),
        {"tsv": upload("t.tsv", tsv), "scores": upload("s.jsonl", scores), "dataset": "up", "context_turns": 3},
        django_capture_on_commit_callbacks,
    )
    assert job.status == JobStatus.SUCCEEDED and Score.objects.count() == 20
    candidate = Question.objects.get().candidates.get(text="x one")
    csv = f"question_id,candidate_id,annotator,score\n{candidate.question_id},{candidate.pk},mturk:W1,2\n"
    job = post_and_run(
        admin_client,
        reverse("admin:annotation_score_import"),
        {"file": upload("s.csv", csv)},
        django_capture_on_commit_callbacks,
    )
    assert job.status == JobStatus.SUCCEEDED and Score.objects.count() == 21


def test_build_form_starts_a_build_job(admin_client, scored_dataset, django_capture_on_commit_callbacks):
    job = post_and_run(
        admin_client,
        reverse("admin:annotation_dataset_build", args=[scored_dataset.pk]),
        {"name": "adm-r1", "false_per_question": 3, "seed": 4, "rules": FilterRules.objects.get().pk},
        django_capture_on_commit_callbacks,
    )
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert TestSet.objects.get(name="adm-r1").seed == 4


def test_test_set_downloads_stream_the_frozen_files(admin_client, scored_dataset):
    testset = testset_build(dataset_name="adm", name="adm-r1")
    response = admin_client.get(reverse("admin:testsets_testset_download", args=[testset.pk, "tsv"]))
    assert response.streaming and response["Content-Disposition"] == 'attachment; filename="adm-r1.tsv"'
    body = b"".join(response.streaming_content)
    assert hashlib.sha256(body).hexdigest() == testset.manifest["files"]["tsv"]["sha256"]
    manifest = admin_client.get(reverse("admin:testsets_testset_download", args=[testset.pk, "manifest"]))
    assert json.loads(b"".join(manifest.streaming_content)) == testset.manifest


def test_test_set_admin_pages_render(admin_client, scored_dataset):
    testset = testset_build(dataset_name="adm", name="adm-r1")
    assert "adm-r1.jsonl" in admin_client.get(reverse("admin:testsets_testset_changelist")).content.decode()
    assert "sha256" in admin_client.get(reverse("admin:testsets_testset_change", args=[testset.pk])).content.decode()


def test_build_form_refuses_a_dataset_whose_preview_yields_nothing(admin_client, db, scored_question):
    """Nothing is queued, and the refusal gives the preview's reason by rule."""
    dataset = DatasetFactory(name="adm-empty")
    scored_question(dataset=dataset, gt=[5, 5], false=[[1, 1]] * 3)  # too few scores: undecided
    scored_question(dataset=dataset, gt=[1, 1, 1, 5, 5], false=[WRONG] * 3)  # ground truth rejected
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 2)  # 2 false candidates kept
    response = admin_client.post(
        reverse("admin:annotation_dataset_build", args=[dataset.pk]),
        {"name": "never", "false_per_question": 3, "seed": 0, "rules": FilterRules.objects.get().pk},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "no question passes the rules with 3 false candidates" in page
    assert "Of 3 questions: 1 with ground truth still undecided (more scores needed)" in page
    assert "1 with ground truth rejected by the rules" in page
    assert "1 with fewer than 3 false candidates kept" in page
    assert not Job.objects.exists() and not TestSet.objects.exists()


def test_build_form_refuses_bad_values_with_a_400(admin_client, scored_dataset):
    response = admin_client.post(
        reverse("admin:annotation_dataset_build", args=[scored_dataset.pk]), {"name": "", "false_per_question": "x"}
    )
    assert response.status_code == 400 and not Job.objects.exists()


def test_build_form_starts_a_shortcut_aware_build(admin_client, scored_dataset, django_capture_on_commit_callbacks):
    job = post_and_run(
        admin_client,
        reverse("admin:annotation_dataset_build", args=[scored_dataset.pk]),
        {
            "name": "adm-aware",
            "false_per_question": 3,
            "seed": 4,
            "rules": FilterRules.objects.get().pk,
            "shortcut_aware": "on",
            "shortcut_rounds": 1,
        },
        django_capture_on_commit_callbacks,
    )
    assert job.status == JobStatus.SUCCEEDED, job.error
    balance = TestSet.objects.get(name="adm-aware").manifest["shortcut_balance"]
    assert (balance["rounds"], balance["seed"], balance["drop_unbalanced"]) == (1, 4, False)
    assert job.result["unbalanced"] == balance["unbalanced"]


def test_build_form_refuses_negative_shortcut_rounds_with_a_400(admin_client, scored_dataset):
    response = admin_client.post(
        reverse("admin:annotation_dataset_build", args=[scored_dataset.pk]),
        {
            "name": "adm-bad",
            "false_per_question": 3,
            "seed": 0,
            "rules": FilterRules.objects.get().pk,
            "shortcut_aware": "on",
            "shortcut_rounds": -1,
        },
    )
    assert response.status_code == 400 and not Job.objects.exists()
    assert "shortcut-rounds" in response.content.decode() or "shortcut_rounds" in response.content.decode()
