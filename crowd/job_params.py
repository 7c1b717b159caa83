"""The crowd app's job kinds and their typed parameters (core.job_registry): publishing a batch
and syncing its submitted work. The handlers in crowd/job_handlers.py unpack them."""

from dataclasses import dataclass
from typing import Any, ClassVar

from django.urls import reverse

from core.job_registry import JobParams, NextStep, param
from core.readable import count


def batch_step(batch_id: int, name: str) -> NextStep:
    return NextStep(f"Open crowd batch {name}", reverse("admin:crowd_crowdbatch_change", args=[batch_id]))


@dataclass(frozen=True, kw_only=True)
class CrowdPublishParams(JobParams):
    kind: ClassVar[str] = "crowd_publish"
    label: ClassVar[str] = "publish a crowd batch"
    start_permission: ClassVar[str | None] = "crowd.change_crowdbatch"

    batch_id: int = param(help="the crowd batch's id", option="batch", form=False)  # the admin's row
    # The admin asks on a confirmation page; the command with this flag.
    confirm_production: bool = param(False, help="publish a production batch (MTurk: real money)", form=False)

    def summary(self, result: dict[str, Any]) -> str:
        return f"Published {count(result['published_tasks'])} tasks of crowd batch {result['batch']}."

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return batch_step(self.batch_id, result["batch"])


@dataclass(frozen=True, kw_only=True)
class CrowdSyncParams(JobParams):
    kind: ClassVar[str] = "crowd_sync"
    label: ClassVar[str] = "sync a crowd batch"
    start_permission: ClassVar[str | None] = "crowd.change_crowdbatch"

    batch_id: int = param(help="the crowd batch's id", option="batch", form=False)  # the admin's row
    periodic: bool = param(False, help="started by Celery beat, not by a researcher", form=False, command=False)

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
