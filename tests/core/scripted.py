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
