"""Job kinds and their typed parameters (core.job_registry)."""

from dataclasses import dataclass, field
from typing import ClassVar

import pytest
from django.core.cache import cache

from core.errors import UserError
from core.job_registry import JobParams, job_kind_register, job_kinds_all
from core.models import Job, JobStatus, job_cache_key
from core.services.jobs import JobProgress, job_cancel, job_create, job_execute
from tests.core.scripted import ScriptedParams


@dataclass(frozen=True, kw_only=True)
class ExampleParams(JobParams):
    kind: ClassVar[str] = "test_example"
    label: ClassVar[str] = "example"

    name: str
    count: int = 3
    ratio: float = 0.5
    names: list[str] = field(default_factory=list)
    limit: int | None = None


def test_parameters_round_trip_through_json():
    params = ExampleParams(name="a", count=4, names=["x", "y"], limit=None)
    assert ExampleParams.from_json(params.to_json()) == params


def test_missing_parameters_take_their_one_default():
    assert ExampleParams.from_json({"name": "a"}) == ExampleParams(name="a", count=3, ratio=0.5, names=[])
    assert (ExampleParams.default("count"), ExampleParams.default("names")) == (3, [])


def test_an_int_is_taken_where_a_float_is_declared():
    assert ExampleParams.from_json({"name": "a", "ratio": 1}).ratio == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "parameter name is missing"),
        ({"name": "a", "colour": "red"}, "unknown parameter(s) colour"),
        ({"name": "a", "count": "3"}, "parameter count has the wrong type ('3')"),
        ({"name": "a", "count": True}, "parameter count has the wrong type (True)"),
        ({"name": "a", "names": ["x", 1]}, "parameter names has the wrong type"),
        ({"name": "a", "limit": 1.5}, "parameter limit has the wrong type"),
        (["name"], "parameters must be a JSON object"),
    ],
)
def test_bad_parameters_are_a_user_error_naming_the_field(data, message):
    with pytest.raises(UserError, match="^test_example job: ") as error:
        ExampleParams.from_json(data)
    assert message in str(error.value)


def test_a_job_row_with_bad_parameters_fails_with_that_error(job, execute):
    Job.objects.filter(pk=job.pk).update(params={"x": "one"})
    execute(job, lambda j, p: pytest.fail("must not run"))
    job.refresh_from_db()
    assert (job.status, job.error) == (JobStatus.FAILED, "test_scripted job: parameter x has the wrong type ('one')")


def test_a_job_of_a_kind_no_app_declares_fails_clearly(db):
    job = Job.objects.create(kind="gone_kind", params={})
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.error) == (JobStatus.FAILED, "unknown job kind 'gone_kind' (no installed app declares it)")
    assert job.kind_label == "gone_kind"


def test_creating_a_job_of_an_unregistered_kind_is_refused(db):
    with pytest.raises(UserError, match="unknown job kind 'test_example'"):
        job_create(params=ExampleParams(name="a"))
    assert not Job.objects.exists()


def test_a_kind_name_cannot_be_taken_twice(scripted_kind):
    @dataclass(frozen=True, kw_only=True)
    class Impostor(JobParams):
        kind: ClassVar[str] = ScriptedParams.kind
        label: ClassVar[str] = "impostor"

    with pytest.raises(ValueError, match="registered already"):
        job_kind_register(params=Impostor, handler=lambda p, j, pr: {})


def test_a_kind_names_a_known_queue():
    @dataclass(frozen=True, kw_only=True)
    class Elsewhere(JobParams):
        kind: ClassVar[str] = "test_elsewhere"
        label: ClassVar[str] = "elsewhere"
        queue: ClassVar[str] = "tpu"

    with pytest.raises(ValueError, match="queue must be one of"):
        job_kind_register(params=Elsewhere, handler=lambda p, j, pr: {})


def test_every_app_registers_its_kinds():
    names = {kind.name for kind in job_kinds_all()}
    assert {"import_dialogues", "build_testset", "import_repository", "build_pools", "evaluate", "campaign"} <= names
    assert all(kind.queue in ("default", "gpu") and kind.label for kind in job_kinds_all())


def test_the_handler_gets_the_typed_parameters(job, scripted_kind):
    job_execute(job_id=job.pk)
    assert scripted_kind.params_seen == [ScriptedParams(x=1)]


def test_a_job_run_inside_another_reports_to_both_and_stops_when_the_outer_one_is_cancelled(db, scripted_kind, execute):
    # given an outer job (a campaign, say) whose handler runs an inner one (an evaluation)
    outer = job_create(params=ScriptedParams(x=1), enqueue=False)
    inner = job_create(params=ScriptedParams(x=2), enqueue=False)
    reports = []

    def inner_handler(job, progress: JobProgress):
        progress.update(done=1, total=4, force=True)
        reports.append(cache.get(job_cache_key(outer.pk, "progress"))["done_count"])
        job_cancel(job_id=outer.pk)  # the researcher cancels the outer job meanwhile
        progress.update(done=2, total=4, force=True)
        return {}

    def outer_handler(job, progress):
        scripted_kind.handler = inner_handler
        job_execute(job_id=inner.pk, parent=progress)
        return {}

    # when the outer job runs
    execute(outer, outer_handler)
    # then the outer job saw the inner one's progress, and the cancel stopped the inner job
    assert reports == [1]
    inner.refresh_from_db()
    assert inner.status == JobStatus.CANCELLED
