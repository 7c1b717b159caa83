"""The status of a long evaluation-side run (an Evaluation, a Generation) follows its job."""

from collections.abc import Iterator
from contextlib import contextmanager

from core.errors import JobCancelled
from evaluation.models import EvaluationStatus


@contextmanager
def run_tracked(model, pk: int, *, system_version) -> Iterator[None]:
    """Mark the row running; cancelled when the job is cancelled, failed (with the error) on any
    other exception, which is raised again. The caller marks success with what it produced."""
    rows = model.objects.filter(pk=pk)
    rows.update(status=EvaluationStatus.RUNNING, error="", system_version=system_version)
    try:
        yield
    except JobCancelled:
        rows.update(status=EvaluationStatus.CANCELLED)
        raise
    except Exception as exc:
        rows.update(status=EvaluationStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
