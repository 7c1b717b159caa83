"""A job kind of the tests (registered by the scripted_kind fixture of tests/core/conftest.py)."""

from dataclasses import dataclass
from typing import ClassVar

from core.job_registry import JobParams


@dataclass(frozen=True, kw_only=True)
class ScriptedParams(JobParams):
    """A job kind of the tests whose handler each test sets (``scripted_kind.handler``)."""

    kind: ClassVar[str] = "test_scripted"
    label: ClassVar[str] = "scripted test job"

    x: int = 1


@dataclass(frozen=True, kw_only=True)
class ShardedParams(JobParams):
    """A job kind of the tests that splits its work into ``shards`` shards of ``size`` items
    (registered by the sharded_kind fixture; each test may set its shard handler's ``work``)."""

    kind: ClassVar[str] = "test_sharded"
    label: ClassVar[str] = "sharded test job"

    shards: int = 3
    size: int = 4


@dataclass(frozen=True, kw_only=True)
class StagedParams(JobParams):
    """A job kind of the tests whose handler runs two stages of shards, "first" then "" (registered
    by the staged_kind fixture, with one shard handler per stage)."""

    kind: ClassVar[str] = "test_staged"
    label: ClassVar[str] = "staged test job"

    first: int = 2  # shards of stage "first", of 2 items each
    second: int = 3  # shards of stage "", of 5 items each
