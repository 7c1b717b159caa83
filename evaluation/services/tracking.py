"""The status of a long evaluation-side run (an Evaluation, a PairEvaluation, a Generation) follows its job."""

from collections.abc import Iterator
from contextlib import contextmanager

from core.errors import JobCancelled
from core.job_registry import JobParams
from core.models import Job
from core.services.jobs import job_create
from evaluation.models import EvaluationStatus, System


@contextmanager
def run_tracked(model, pk: int, *, system: System) -> Iterator[None]:
    """Mark the row running, with the version of the system it runs (its updated_at, and the commit of
    its Hugging Face checkpoint: the exact weights); cancelled when the job is cancelled, failed (with
    the error) on any other exception, which is raised again. The caller marks success with what it
    produced."""
    rows = model.objects.filter(pk=pk)
    rows.update(
        status=EvaluationStatus.RUNNING, error="", system_version=system.updated_at, system_revision=system.revision
    )
    try:
        yield
    except JobCancelled:
        rows.update(status=EvaluationStatus.CANCELLED)
        raise
    except Exception as exc:
        rows.update(status=EvaluationStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise


def tracked_job_start(run, *, params: JobParams, created_by, enqueue: bool) -> Job:
    """Give a locked evaluation row a new job to run or resume it, and mark it pending. The caller
    holds the row's lock (select_for_update) and has already discarded stale results."""
    job = job_create(params=params, created_by=created_by, enqueue=enqueue)
    run.job = job
    run.status = EvaluationStatus.PENDING
    run.error = ""
    run.save(update_fields=["job", "status", "error", "system_version"])
    return job
