import pytest

from core.job_registry import job_kind_register, job_kind_unregister
from core.services.jobs import job_create, job_execute
from tests.core.scripted import ScriptedParams


class ScriptedKind:
    def __init__(self) -> None:
        self.handler = lambda job, progress: {}
        self.params_seen: list[ScriptedParams] = []

    def run(self, params, job, progress) -> dict:
        self.params_seen.append(params)
        return self.handler(job, progress)


@pytest.fixture
def scripted_kind():
    """The scripted job kind, registered for the test: ``scripted_kind.handler(job, progress)`` runs it."""
    kind = ScriptedKind()
    job_kind_register(params=ScriptedParams, handler=kind.run)
    yield kind
    job_kind_unregister(ScriptedParams.kind)


@pytest.fixture
def job(db, scripted_kind):
    """A pending job of the scripted kind, not sent to any worker."""
    return job_create(params=ScriptedParams(x=1), enqueue=False)


@pytest.fixture
def execute(scripted_kind):
    """Run a scripted job with this handler, as a worker would: ``execute(job, handler)``."""

    def run(job, handler) -> None:
        scripted_kind.handler = handler
        job_execute(job_id=job.pk)

    return run
