"""The retrieval jobs from the command line and the admin, with progress recorded on the job."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.job_params import ImportScoresParams
from annotation.models import Candidate, Repository
from annotation.services.demo import DEMO_DATASET, DEMO_DIR
from annotation.services.dialogue_import import dialogues_import
from core.models import Job, JobStatus
from core.services.jobs import job_create
from retrieval.job_params import BuildPoolsParams
from retrieval.models import IndexStatus, RetrievalIndex
from retrieval.services.demo import DEMO_REPOSITORY, DEMO_REPOSITORY_FILE
from retrieval.services.repository_import import repository_import

pytestmark = pytest.mark.slow


@pytest.fixture
def demo(db):
    dialogues_import(path=DEMO_DIR / "dialogues.jsonl", fmt="jsonl", dataset_name=DEMO_DATASET)
    repository_import(path=DEMO_REPOSITORY_FILE, name=DEMO_REPOSITORY, exclude_datasets=[DEMO_DATASET])


def test_retrieve_command_builds_pools_and_reports(demo):
    out = StringIO()
    call_command("retrieve", dataset=DEMO_DATASET, repository=DEMO_REPOSITORY, lexical=3, dense=2, stdout=out)
    report = json.loads(out.getvalue())
    assert (report["built"], report["candidates_added"]) == (40, 200)
    job = Job.objects.get(kind="build_pools")
    assert (job.status, job.progress, job.done_count, job.total_count) == (JobStatus.SUCCEEDED, 100, 40, 40)


def test_a_pool_job_records_each_phase_with_its_own_counts_in_its_own_units(demo):
    # given a repository without indexes
    call_command("retrieve", dataset=DEMO_DATASET, repository=DEMO_REPOSITORY, lexical=3, dense=2, stdout=StringIO())
    job = Job.objects.get(kind="build_pools")
    utterances = Repository.objects.get(name=DEMO_REPOSITORY).utterances.count()
    # then it built the indexes, then retrieved, each phase counted in its own unit and timed
    assert [(p["name"], p["unit"], p["done"], p["total"]) for p in job.phases] == [
        ("building the lexical index", "utterances", utterances, utterances),
        ("encoding utterances", "utterances", utterances, utterances),
        ("building the vector index", "", 0, 0),
        ("retrieving candidates", "questions", 40, 40),
    ]
    assert all(p["seconds"] >= 0 for p in job.phases)


def test_the_page_of_a_finished_pool_job_lists_its_phases_and_says_what_it_did(admin_client, demo):
    call_command("retrieve", dataset=DEMO_DATASET, repository=DEMO_REPOSITORY, lexical=3, dense=2, stdout=StringIO())
    job = Job.objects.get(kind="build_pools")
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "encoding utterances" in page and "40 of 40 questions" in page
    assert f"Retrieved candidates for 40 questions of dataset {DEMO_DATASET}" in page
    assert f'href="{reverse("dashboard-dataset", args=[DEMO_DATASET])}"' in page


def test_build_indexes_command_makes_a_new_version_each_time(demo):
    call_command("build_indexes", repository=DEMO_REPOSITORY, only="lexical", stdout=StringIO())
    call_command("build_indexes", repository=DEMO_REPOSITORY, only="lexical", stdout=StringIO())
    versions = RetrievalIndex.objects.filter(kind="lexical", status=IndexStatus.READY).values_list("version", flat=True)
    assert sorted(versions) == [1, 2]


def test_pools_from_the_admin_run_as_a_job(admin_client, demo, django_capture_on_commit_callbacks):
    dataset_id = Candidate.objects.first().question.dataset_id
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:annotation_dataset_pools", args=[dataset_id]),
            {"repository": DEMO_REPOSITORY, "lexical": 5, "dense": 5, "min_tokens": 3, "paraphrase_threshold": 0.95},
        )
    job = Job.objects.get(kind="build_pools")
    assert response["Location"] == reverse("job-detail", args=[job.pk])
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.result["built"] == 40 and job.created_by.is_superuser


def test_pool_form_needs_at_least_one_candidate(admin_client, demo):
    dataset_id = Candidate.objects.first().question.dataset_id
    response = admin_client.post(
        reverse("admin:annotation_dataset_pools", args=[dataset_id]),
        {"repository": DEMO_REPOSITORY, "lexical": 0, "dense": 0, "min_tokens": 3, "paraphrase_threshold": 0.95},
    )
    assert response.status_code == 200 and "Ask for at least one candidate" in response.content.decode()
    assert not Job.objects.exists()


def test_index_action_on_repositories(admin_client, demo, django_capture_on_commit_callbacks):
    repository = Repository.objects.get(name=DEMO_REPOSITORY)
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            reverse("admin:annotation_repository_changelist"),
            {"action": "build_indexes", "_selected_action": [repository.pk]},
        )
    job = Job.objects.get(kind="build_indexes")
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert set(job.result) == {"lexical", "dense"} and job.result["dense"]["faiss"] == "GEMM"


def test_jobs_that_want_a_gpu_go_to_the_gpu_queue(db, settings, sent_tasks, django_capture_on_commit_callbacks):
    # given the GPU queue (sent_tasks records where each job is sent)
    settings.WELLCHOSEN_GPU_QUEUE = "gpu"
    # when a pool job and an import job are created
    with django_capture_on_commit_callbacks(execute=True):
        pools = job_create(params=BuildPoolsParams(dataset="d", repository="r"))
        scores = job_create(params=ImportScoresParams(path="/s.csv"))
    # then encoding work goes to the GPU queue and the rest to the default queue
    assert sent_tasks == [("core.tasks.run_job", "gpu", [pools.pk]), ("core.tasks.run_job", "default", [scores.pk])]


@pytest.mark.parametrize(
    "name", ["annotation_repository", "annotation_utterance", "retrieval_retrievalindex", "retrieval_questionretrieval"]
)
def test_retrieval_changelists_render(admin_client, demo, name):
    call_command("retrieve", dataset=DEMO_DATASET, repository=DEMO_REPOSITORY, stdout=StringIO())
    assert admin_client.get(reverse(f"admin:{name}_changelist")).status_code == 200
