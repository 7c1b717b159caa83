"""The crowd app's job kinds and their typed parameters (core.job_registry): publishing a batch
and syncing its submitted work. The handlers in crowd/job_handlers.py unpack them."""

from dataclasses import dataclass
from typing import Any, ClassVar

from django.urls import reverse

from core.job_registry import JobParams, NextStep
from core.readable import count


def batch_step(batch_id: int, name: str) -> NextStep:
    return NextStep(f"Open crowd batch {name}", reverse("admin:crowd_crowdbatch_change", args=[batch_id]))


@dataclass(frozen=True, kw_only=True)
class CrowdPublishParams(JobParams):
    kind: ClassVar[str] = "crowd_publish"
    label: ClassVar[str] = "publish a crowd batch"
    start_permission: ClassVar[str | None] = "crowd.change_crowdbatch"

    batch_id: int
    confirm_production: bool = False

    def summary(self, result: dict[str, Any]) -> str:
        return f"Published {count(result['published_tasks'])} tasks of crowd batch {result['batch']}."

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return batch_step(self.batch_id, result["batch"])


@dataclass(frozen=True, kw_only=True)
class CrowdSyncParams(JobParams):
    kind: ClassVar[str] = "crowd_sync"
    label: ClassVar[str] = "sync a crowd batch"
    start_permission: ClassVar[str | None] = "crowd.change_crowdbatch"

    batch_id: int
    periodic: bool = False  # started by Celery beat, not by a researcher

    def summary(self, result: dict[str, Any]) -> str:
        text = (
            f"Synced crowd batch {result['batch']}: {count(result['imported'])} assignments imported, "
            f"{count(result['already_imported'])} known before"
        )
        if result.get("discarded"):
            text += f", {count(len(result['discarded']))} discarded (unknown to the platform by their deadline)"
        return f"{text}."

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return batch_step(self.batch_id, result["batch"])
