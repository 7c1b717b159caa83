"""A job page in a real browser: a finished pool job (its phases, summary, next step and result
table, the raw JSON folded away), a running one (the current phase's bar and ETA) and a failed one
(its cause, the traceback folded away, Retry)."""

import time
import traceback
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from annotation.services.demo import DEMO_DATASET, DEMO_DIR
from annotation.services.dialogue_import import dialogues_import
from core.models import Job, JobShard, JobShardStatus, JobStatus
from core.services import jobs
from retrieval.services.demo import DEMO_REPOSITORY, DEMO_REPOSITORY_FILE
from retrieval.services.repository_import import repository_import
from tests.factories import UserFactory
from tests.task_sends import task_sends_recorded

from .test_annotator_browser import PASSWORD, SCREENSHOTS, browser, log_in  # noqa: F401  (the chromium fixture)

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]


def running_pool_job(**fields) -> Job:
    now = timezone.now()
    return Job.objects.create(
        kind="build_pools",
        params={"dataset": "d", "repository": "r"},
        status=JobStatus.RUNNING,
        started_at=now,
        heartbeat_at=now,
        **fields,
    )


@pytest.fixture
def base(live_server):
    UserFactory(username="boss", password=PASSWORD, is_staff=True, is_superuser=True)
    return live_server.url


def test_a_finished_pool_job_page_lists_its_phases_and_links_to_the_dataset(browser, base):  # noqa: F811
    # given a pool job run on the demo dialogues and repository (its indexes built on the way)
    dialogues_import(path=DEMO_DIR / "dialogues.jsonl", fmt="jsonl", dataset_name=DEMO_DATASET)
    repository_import(path=DEMO_REPOSITORY_FILE, name=DEMO_REPOSITORY, exclude_datasets=[DEMO_DATASET])
    call_command("retrieve", dataset=DEMO_DATASET, repository=DEMO_REPOSITORY, stdout=StringIO())
    job = Job.objects.get(kind="build_pools")
    # when the researcher opens its page
    page = log_in(browser, base, "boss")
    page.goto(f"{base}/jobs/{job.pk}/")
    # then the phases are listed as done, with the summary, the next step and the result table
    assert page.locator("ol.phases li").count() == 4
    assert page.locator("li.phase-running").count() == 0
    assert "Retrieved candidates for 40 questions" in page.locator("#job-summary").inner_text()
    assert page.locator("#job-result-rows table").count() >= 1
    # and the JSON is folded away until asked for
    assert not page.locator("#job-result").is_visible()
    page.screenshot(path=SCREENSHOTS / "job-finished.png", full_page=True)
    page.click("details.raw summary")
    assert page.locator("#job-result").is_visible()
    page.screenshot(path=SCREENSHOTS / "job-finished-json.png", full_page=True)
    # the next step leads to the dataset's page
    with page.expect_navigation():
        page.click("#job-next")
    assert page.url.endswith(f"/dashboard/{DEMO_DATASET}/")


def test_a_running_job_page_shows_the_current_phase_with_its_bar_and_eta(browser, base):  # noqa: F811
    now = time.time()
    job = running_pool_job(
        phase="retrieving candidates",
        phases=[
            {
                "name": "building the lexical index",
                "unit": "utterances",
                "done": 25794,
                "total": 25794,
                "failed": 0,
                "estimated": False,
                "seconds": 12.4,
            },
            {
                "name": "encoding utterances",
                "unit": "utterances",
                "done": 25794,
                "total": 25794,
                "failed": 0,
                "estimated": False,
                "seconds": 95.0,
            },
            {
                "name": "retrieving candidates",
                "unit": "questions",
                "done": 310,
                "total": 1000,
                "failed": 0,
                "estimated": False,
                "seconds": None,
                "started": now - 62,
            },
        ],
    )
    page = log_in(browser, base, "boss")
    page.goto(f"{base}/jobs/{job.pk}/")
    page.wait_for_timeout(1500)  # one poll of status.json has redrawn the phases
    assert page.locator("li.phase-running progress").count() == 1
    assert "left in this step" in page.locator("#job-eta-line").inner_text()
    assert "310 of 1,000 questions" in page.locator("li.phase-running").inner_text()
    page.screenshot(path=SCREENSHOTS / "job-running.png", full_page=True)


def test_a_running_job_page_shows_a_stage_of_shards_planned_after_it_was_drawn(browser, base):  # noqa: F811
    # given a pool job whose encoding shards are done and whose question shards are not planned yet
    job = running_pool_job(phase="encoding utterances")
    for number in range(2):
        JobShard.objects.create(
            job=job, stage="encoding", number=number, status=JobShardStatus.SUCCEEDED, attempts=1, worker="w:1"
        )
    page = log_in(browser, base, "boss")
    page.goto(f"{base}/jobs/{job.pk}/")
    assert page.locator("#job-shards tbody tr").count() == 2
    # when the job plans its question shards while the page is open
    for number in range(3):
        JobShard.objects.create(job=job, stage="", number=number)
    # then the page redraws itself with the new stage's rows (its poll reloads it)
    expect(page.locator("#job-shards tbody tr")).to_have_count(5, timeout=10000)
    assert page.locator("#job-shard-2 .status").inner_text() == "pending"
    assert page.locator("#job-shard-encoding-1 .status").inner_text() == "succeeded"
    page.screenshot(path=SCREENSHOTS / "job-new-stage.png", full_page=True)


def shard_failure() -> str:
    """A shard's error as job_shards records an unexpected exception: class, message, traceback."""
    try:
        raise RuntimeError("CUDA error: out of memory")
    except RuntimeError as exc:
        return f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"


def test_a_failed_job_page_names_the_cause_and_retry_sends_the_job_again(browser, base, monkeypatch):  # noqa: F811
    # given a pool job whose third encoding shard of five failed on the GPU, two having succeeded
    sent = task_sends_recorded(monkeypatch, jobs)  # the live server's sends are recorded, not run
    error = shard_failure()
    job = running_pool_job(phase="encoding utterances")
    statuses = [JobShardStatus.SUCCEEDED] * 2 + [JobShardStatus.FAILED] + [JobShardStatus.PENDING] * 2
    for number, status in enumerate(statuses):
        claimed = status != JobShardStatus.PENDING
        JobShard.objects.create(
            job=job,
            stage="encoding",
            number=number,
            status=status,
            attempts=int(claimed),
            worker="gpu-1:4242" if claimed else "",
            total_count=100_000,
            done_count=100_000 if status == JobShardStatus.SUCCEEDED else (31_000 if claimed else 0),
            error=error if status == JobShardStatus.FAILED else "",
        )
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.FAILED, attempts=1, finished_at=timezone.now(), error=f"encoding shard 3 of 5 failed: {error}"
    )
    # when the researcher opens its page
    page = log_in(browser, base, "boss")
    page.goto(f"{base}/jobs/{job.pk}/")
    # then the cause is one sentence, the traceback folded away, and Retry says the finished shards are kept
    assert page.inner_text("#job-cause") == (
        "Unexpected error in build candidate pools, step “encoding utterances”: "
        "encoding shard 3 of 5 failed: RuntimeError: CUDA error: out of memory"
    )
    assert not page.locator("#job-traceback pre").is_visible()
    assert "the 2 finished shards of 5 are kept" in page.inner_text("#job-retry-form")
    page.screenshot(path=SCREENSHOTS / "job-failed.png", full_page=True)
    page.click("#job-traceback summary")
    assert "Traceback (most recent call last)" in page.inner_text("#job-traceback pre")
    # when Retry is clicked
    with page.expect_navigation():
        page.click("#job-retry")
    # then the same job is pending again, sent once to its queue, its finished shards kept
    assert page.inner_text("#job-status") == "pending" and "sent to its queue again" in page.inner_text(".messages")
    assert "Queued on gpu; no job is ahead of it." in page.inner_text("#job-wait")
    assert page.locator("#job-retry").count() == 0 and page.locator("#job-cause").count() == 0
    statuses = [page.inner_text(f"#job-shard-encoding-{n} .status") for n in range(5)]
    assert statuses == ["succeeded"] * 2 + ["pending"] * 3
    assert sent == [("core.tasks.run_job", "gpu", [job.pk])]
    page.screenshot(path=SCREENSHOTS / "job-retried.png", full_page=True)
