"""The crowd app's job kinds and their typed parameters (core.job_registry): publishing a batch
and syncing its submitted work. The handlers in crowd/job_handlers.py unpack them."""

from dataclasses import dataclass
from typing import ClassVar

from core.job_registry import JobParams


@dataclass(frozen=True, kw_only=True)
class CrowdPublishParams(JobParams):
    kind: ClassVar[str] = "crowd_publish"
    label: ClassVar[str] = "publish a crowd batch"

    batch_id: int
    confirm_production: bool = False


@dataclass(frozen=True, kw_only=True)
class CrowdSyncParams(JobParams):
    kind: ClassVar[str] = "crowd_sync"
    label: ClassVar[str] = "sync a crowd batch"

    batch_id: int
    periodic: bool = False  # started by Celery beat, not by a researcher
