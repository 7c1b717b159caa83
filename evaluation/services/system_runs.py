"""The lifecycle every system run shares (an Evaluation, a PairEvaluation, a Generation: a SystemRun).

Starting: a run whose system changed since it ran (or whose own settings changed) loses its
results and gets a new job; one with a job still queued or running keeps it (one job at a time); a
finished one with nothing left to do needs none; any other gets a new job, to run or resume it.
Running: the row is marked running with the system version it runs, the work is done in shards of
its job (or in one piece without a job), and the row follows the outcome: succeeded with its
summary, cancelled, or failed with the error.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.utils import timezone

from core.errors import JobCancelled
from core.job_registry import JobParams
from core.models import Job
from core.services.job_shards import ShardSpec, job_shards_run
from core.services.jobs import JobProgress, job_create
from evaluation.models import EvaluationStatus, ScoringRun, System, SystemRun


def system_run_is_stale(*, run: SystemRun, system: System) -> bool:
    """The system was edited since the run first wrote results: they are not the system's any more."""
    return run.system_version is not None and run.system_version != system.updated_at


def system_run_job_is_live(*, run: SystemRun) -> bool:
    """The run's job is still queued or running."""
    return run.job is not None and not run.job.is_finished


def system_run_start(
    *,
    run: SystemRun,
    system: System,
    params: JobParams,
    created_by,
    enqueue: bool,
    results_discard: Callable[[], None],
    is_complete: Callable[[], bool],
    changed: bool = False,
    updates: dict | None = None,
) -> Job | None:
    """The job that runs or resumes ``run`` (None: finished, nothing to do). The caller holds the
    row's lock (select_for_update in a transaction).

    ``results_discard`` deletes the run's results (the system changed since, or ``changed``: the
    run's own settings did); ``is_complete`` says whether a succeeded run has every result it
    should have; ``updates`` are the run's settings, saved with its new job."""
    if system_run_is_stale(run=run, system=system) or changed:
        results_discard()
        run.system_version = None
    elif system_run_job_is_live(run=run):
        return run.job
    elif run.status == EvaluationStatus.SUCCEEDED and is_complete():
        return None
    updates = updates or {}
    for field, value in updates.items():
        setattr(run, field, value)
    run.job = job_create(params=params, created_by=created_by, enqueue=enqueue)
    run.status = EvaluationStatus.PENDING
    run.error = ""
    run.save(update_fields=["job", "status", "error", "system_version", *updates])
    return run.job


def system_run_execute(
    *,
    run: SystemRun,
    job: Job | None,
    progress: JobProgress | None,
    plan: Callable[[], list[ShardSpec]],
    phase: str,
    unit: str,
    run_in_one_piece: Callable[[], object],
    summarise: Callable[[], dict],
) -> dict:
    """Do the run's work and mark it succeeded; returns its summary (stored on a ScoringRun).

    With its ``job`` (and the job's progress), the work is the ``plan``'s shards, which any worker
    on the job's queue may run; without, ``run_in_one_piece`` does it here. Either way
    ``summarise`` reads the stored results once they are all there."""
    with run_tracked(type(run), run.pk, system=run.system):
        if job is not None and progress is not None:
            job_shards_run(job=job, progress=progress, plan=plan, phase=phase, unit=unit)
        else:
            run_in_one_piece()
        summary = summarise()
    stored = {"summary": summary} if isinstance(run, ScoringRun) else {}
    type(run).objects.filter(pk=run.pk).update(status=EvaluationStatus.SUCCEEDED, finished_at=timezone.now(), **stored)
    return summary


@contextmanager
def run_tracked(model: type[SystemRun], pk: int, *, system: System) -> Iterator[None]:
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
