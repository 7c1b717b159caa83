import pytest

from config.celery import app as celery_app
from core.job_registry import job_kind_register, job_kind_unregister
from core.services.job_shards import ShardSpec, job_shards_run
from core.services.jobs import job_create, job_execute
from tests.core.scripted import ScriptedParams, ShardedParams, StagedParams
from tests.task_sends import task_sends_recorded


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


class ShardedKind:
    """The sharded test kind: its handler plans ``params.shards`` shards of ``params.size`` items,
    runs them (core.services.job_shards) and sums their results; each shard counts its items,
    reporting progress after each, and calls ``work(job, shard, progress, item)`` before it."""

    def __init__(self) -> None:
        self.work = lambda job, shard, progress, item: None
        self.plans = 0
        self.ran: list[int] = []  # shard numbers, in the order they ran here

    def plan(self, params):
        self.plans += 1
        return [
            ShardSpec({"first": n * params.size, "last": (n + 1) * params.size - 1}, total=params.size)
            for n in range(params.shards)
        ]

    def run(self, params, job, progress) -> dict:
        results = job_shards_run(
            job=job, progress=progress, plan=lambda: self.plan(params), phase="counting", unit="items"
        )
        return {"items": sum(r["items"] for r in results), "shards": len(results)}

    def run_shard(self, params, job, shard, progress) -> dict:
        self.ran.append(shard.number)
        items = range(shard.params["first"], shard.params["last"] + 1)
        for done, item in enumerate(items, start=1):
            self.work(job, shard, progress, item)
            progress.update(done=done, total=len(items), force=True)
        return {"items": len(items)}


@pytest.fixture
def sharded_kind():
    """The sharded test kind (ShardedParams), registered for the test."""
    kind = ShardedKind()
    job_kind_register(params=ShardedParams, handler=kind.run, shard_handler=kind.run_shard)
    yield kind
    job_kind_unregister(ShardedParams.kind)


class StagedKind:
    """The test kind of two stages: its handler runs stage "first" (``params.first`` shards of 2
    items), then stage "" (``params.second`` shards of 5 items), each with its own shard handler,
    and returns each stage's results. ``ran``: (stage, number) of each shard run here, in order."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, int]] = []

    def run(self, params, job, progress) -> dict:
        first = job_shards_run(
            job=job,
            progress=progress,
            plan=lambda: [ShardSpec({"items": 2}, total=2)] * params.first,
            phase="first stage",
            unit="a",
            stage="first",
        )
        second = job_shards_run(
            job=job,
            progress=progress,
            plan=lambda: [ShardSpec({"items": 5}, total=5)] * params.second,
            phase="second stage",
            unit="b",
        )
        return {"first": first, "second": second}

    def run_first(self, params, job, shard, progress) -> dict:
        return self._count(shard, progress, handler="first")

    def run_second(self, params, job, shard, progress) -> dict:
        return self._count(shard, progress, handler="second")

    def _count(self, shard, progress, *, handler: str) -> dict:
        self.ran.append((shard.stage, shard.number))
        items = shard.params["items"]
        for done in range(1, items + 1):
            progress.update(done=done, total=items, force=True)
        return {"handler": handler, "number": shard.number}


@pytest.fixture
def staged_kind():
    """The test kind of two stages of shards (StagedParams), registered with a handler per stage."""
    kind = StagedKind()
    job_kind_register(
        params=StagedParams, handler=kind.run, shard_handler={"first": kind.run_first, "": kind.run_second}
    )
    yield kind
    job_kind_unregister(StagedParams.kind)


@pytest.fixture
def sent_shard_tasks(monkeypatch) -> list[tuple[str, str, list]]:
    """Messages are sent (not eager) and recorded, ``(task path, queue, args)``, instead of reaching a broker."""
    from core.services import job_shards

    monkeypatch.setitem(celery_app.conf, "task_always_eager", False)
    return task_sends_recorded(monkeypatch, job_shards)
