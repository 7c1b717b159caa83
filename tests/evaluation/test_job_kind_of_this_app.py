"""A job kind added by the evaluation app alone: declared and registered here, run by core's one
task, with no migration of any app (Job.kind carries no other app's choices)."""

from dataclasses import dataclass
from io import StringIO
from typing import ClassVar

import pytest
from django.core.management import call_command

from core.job_registry import JobParams, job_kind_get, job_kind_register, job_kind_unregister, param
from core.models import Job, JobStatus
from core.services.jobs import job_create
from evaluation.models import System


@dataclass(frozen=True, kw_only=True)
class CountSystemsParams(JobParams):
    kind: ClassVar[str] = "evaluation_count_systems"
    label: ClassVar[str] = "count the registered systems"
    queue: ClassVar[str] = "gpu"

    prefix: str = param("", help="count the systems whose name starts with this", form=False, command=False)


def count_systems(params: CountSystemsParams, job: Job, progress) -> dict:
    progress.update(done=1, total=1, force=True)
    return {"systems": System.objects.filter(name__startswith=params.prefix).count()}


@pytest.fixture
def registered():
    """What EvaluationConfig.ready() does for the app's own kinds."""
    job_kind_register(params=CountSystemsParams, handler=count_systems)
    yield
    job_kind_unregister(CountSystemsParams.kind)


def test_a_new_evaluation_job_kind_runs_through_the_generic_task(
    db, registered, sent_tasks, settings, django_capture_on_commit_callbacks
):
    # given two systems, and the app's GPU queue
    System.objects.create(name="gpt-a", kind="plugin", plugin="x.Y")
    System.objects.create(name="other", kind="plugin", plugin="x.Y")
    settings.WELLCHOSEN_GPU_QUEUE = "gpu-big"
    # when a job of the new kind is created
    with django_capture_on_commit_callbacks(execute=True):
        job = job_create(params=CountSystemsParams(prefix="gpt"))
    # then it is sent to core's one task on the kind's queue, and that task runs its handler
    assert sent_tasks == [("core.tasks.run_job", "gpu-big", [job.pk])]
    from core.tasks import run_job

    run_job.delay(job.pk)
    job.refresh_from_db()
    assert (job.status, job.result, job.kind_label) == (
        JobStatus.SUCCEEDED,
        {"systems": 1},
        "count the registered systems",
    )


def test_a_new_job_kind_needs_no_migration(db, registered):
    assert job_kind_get("evaluation_count_systems").params is CountSystemsParams
    call_command("makemigrations", "--check", "--dry-run", stdout=StringIO())  # exits 1 on a pending change
