"""What a pending job waits for: its queue, the unfinished jobs ahead of it there, and a word when no
worker seems to take that queue (core.selectors.jobs_waits), on its page and in the job list."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from annotation.job_params import ImportDialoguesParams, ImportScoresParams
from core.models import Job, JobStatus, job_cache_key
from core.selectors import jobs_waits
from core.services.jobs import job_create
from retrieval.job_params import BuildIndexesParams

pytestmark = pytest.mark.django_db


def scores_job(**fields) -> Job:
    """An import-scores job (queue "default"), not sent; ``fields`` written on its row."""
    job = job_create(params=ImportScoresParams(path="/x"), enqueue=False)
    if fields:
        Job.objects.filter(pk=job.pk).update(**fields)
        job.refresh_from_db()
    return job


def running(job: Job, *, progress: int) -> Job:
    """The job running, at ``progress`` % as its worker last reported to the cache (not yet to the row)."""
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, started_at=timezone.now(), progress=5)
    cache.set(job_cache_key(job.pk, "progress"), {"progress": progress}, timeout=60)
    job.refresh_from_db()
    return job


def detail(client, job: Job) -> str:
    return client.get(reverse("job-detail", args=[job.pk])).content.decode()


def test_a_pending_job_page_names_its_queue_and_the_jobs_ahead_of_it_with_links(admin_client):
    # given on the queue "default" a pending job sent first and a job running at 40 %; a job
    # sent before on the GPU queue, a finished one, and a later pending one
    earlier = scores_job()
    dialogues = ImportDialoguesParams(path="/x", format="jsonl", dataset="d")
    busy = running(job_create(params=dialogues, enqueue=False), progress=40)
    other_queue = job_create(params=BuildIndexesParams(repository="r"), enqueue=False)
    done = scores_job(status=JobStatus.SUCCEEDED)
    job = scores_job()
    later = scores_job()
    # when its page is opened
    page = detail(admin_client, job)
    # then it says where it is queued and lists the running job first, with its progress, then the earlier one
    line = page[page.index('id="job-wait"') : page.index("</p>", page.index('id="job-wait"'))]
    assert "Queued on <code>default</code>, behind" in line
    assert line.index(f"job #{busy.pk}</a> (import dialogues, running, 40 %)") < line.index(
        f"job #{earlier.pk}</a> (import scores, pending)"
    )
    assert f'href="{reverse("job-detail", args=[busy.pk])}"' in line
    assert all(f"#{other.pk}<" not in line for other in (other_queue, done, later))
    assert "No worker has taken it" not in line


def test_a_job_first_in_its_queue_has_none_ahead(admin_client):
    job = scores_job()
    page = detail(admin_client, job)
    assert "Queued on <code>default</code>; no job is ahead of it." in page


def test_a_gpu_job_is_queued_on_the_queue_of_the_gpu_setting(admin_client, settings):
    # given the GPU queue renamed and a GPU job running on it
    settings.WELLCHOSEN_GPU_QUEUE = "gpu-big"
    busy = running(job_create(params=BuildIndexesParams(repository="r"), enqueue=False), progress=70)
    scores_job(status=JobStatus.PENDING)  # on "default": not ahead
    job = job_create(params=BuildIndexesParams(repository="r"), enqueue=False)
    page = detail(admin_client, job)
    assert f'Queued on <code>gpu-big</code>, behind\n    <a href="{reverse("job-detail", args=[busy.pk])}">' in page
    assert "(build search indexes, running, 70 %)." in page


def test_a_job_waiting_longer_than_the_stale_period_with_nothing_running_says_no_worker_took_it(admin_client, settings):
    # given a job queued 10 minutes ago (stale after 5), behind another pending one
    settings.WELLCHOSEN_JOB_STALE_AFTER = 300
    long_ago = timezone.now() - timedelta(minutes=10)
    scores_job(queued_at=long_ago - timedelta(seconds=1))
    job = scores_job(queued_at=long_ago)
    page = detail(admin_client, job)
    assert '<strong id="job-no-worker">No worker has taken it yet</strong> after 10 min' in page
    assert "is a worker listening to the queue <code>default</code> running?" in page


def test_a_job_waiting_behind_a_running_one_is_not_said_to_lack_a_worker(admin_client, settings):
    settings.WELLCHOSEN_JOB_STALE_AFTER = 300
    running(scores_job(), progress=10)
    job = scores_job(queued_at=timezone.now() - timedelta(minutes=10))
    assert "No worker has taken it" not in detail(admin_client, job)


def test_a_job_queued_again_waits_behind_the_jobs_queued_before_its_new_message():
    # given a job created first but queued again (retried) after a job created later
    first, second = scores_job(), scores_job()
    Job.objects.filter(pk=first.pk).update(queued_at=timezone.now() + timedelta(seconds=5))
    first.refresh_from_db()
    # then the later-created one is ahead of it, and not the other way round
    waits = jobs_waits(jobs=[first, second])
    assert [a.id for a in waits[first.pk].ahead] == [second.pk]
    assert waits[second.pk].ahead_count == 0


def test_only_the_first_jobs_ahead_are_listed_with_the_count_of_the_others(admin_client):
    for _ in range(5):
        scores_job()
    job = scores_job()
    page = detail(admin_client, job)
    assert page.count("(import scores, pending)") == 3 and "and 2 more." in page


def test_a_running_or_finished_job_has_no_wait():
    jobs = [running(scores_job(), progress=1), scores_job(status=JobStatus.FAILED)]
    assert jobs_waits(jobs=jobs) == {}


def test_a_pending_job_page_costs_the_same_queries_whatever_is_queued(admin_client, django_assert_num_queries):
    # the session, the user, the job, its shards and the queue: one query each
    job = scores_job()
    with django_assert_num_queries(5):
        detail(admin_client, job)
    for _ in range(10):
        running(scores_job(), progress=3)
        scores_job()
    with django_assert_num_queries(5):
        detail(admin_client, job)


def test_the_job_list_says_how_many_jobs_each_pending_one_is_behind(admin_client, settings):
    settings.WELLCHOSEN_JOB_STALE_AFTER = 300
    running(scores_job(), progress=50)
    scores_job()
    scores_job()
    stuck = job_create(params=BuildIndexesParams(repository="r"), enqueue=False)
    Job.objects.filter(pk=stuck.pk).update(queued_at=timezone.now() - timedelta(hours=1))
    page = admin_client.get(reverse("job-list")).content.decode()
    assert '<small class="job-wait">behind 1 job</small>' in page
    assert '<small class="job-wait">behind 2 jobs</small>' in page
    assert '<small class="job-wait">no worker has taken it yet</small>' in page


def test_the_job_list_costs_the_same_queries_with_one_pending_job_or_forty(admin_client, django_assert_num_queries):
    # the session, the user, the jobs and the queue
    scores_job()
    with django_assert_num_queries(4):
        admin_client.get(reverse("job-list"))
    for _ in range(20):
        scores_job()
        running(scores_job(), progress=3)
    with django_assert_num_queries(4):
        page = admin_client.get(reverse("job-list")).content.decode()
    assert page.count('class="job-wait"') == 21
