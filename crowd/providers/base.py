"""The interface of a crowd provider: every operation callers use, and every rule in which the
platforms differ (settings, lease length, fees, warnings, review scope, blocking, disposal, what
the worker pages need). One module per provider implements it; registry.py maps a batch's
provider to its class. Nothing outside this package compares provider names: it asks the provider.

Local bookkeeping lives in the services (crowd.services); a provider does what happens on its
platform and answers for its rules. Operations a platform lacks raise UserError.
"""

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import ClassVar, Self

from django.db.models import Q, QuerySet
from django.utils import timezone

from annotation.models import Annotator
from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdAssignmentStatus, CrowdBatch, CrowdBonus, CrowdTaskStatus

DEFAULT_UNITS_PER_WORKER = 10
# Per-address limits of a batch whose workers arrive by its link (a person who knows the link can
# make up any number of worker ids): new worker ids one address may bring in an hour, and places
# (in units of units_per_worker) that their unconfirmed work may hold at once.
DEFAULT_WORKERS_PER_ADDRESS_PER_HOUR = 3
DEFAULT_WORKERS_PER_ADDRESS = 2
_SETTING_MAX = 1_000_000


@dataclass
class SyncReport:
    """What a sync saw: assignments imported for the first time, already known ones, scores that
    had to be recovered from the provider's copy of the answer, and mismatches to look at."""

    tasks: int = 0
    seen: int = 0
    imported: int = 0
    already_imported: int = 0
    recovered: int = 0
    saved_here_not_submitted: int = 0
    submitted_without_scores: list[str] = field(default_factory=list)
    # Scores the platform's confirmation made count, or its rejection stopped counting.
    scores_confirmed: int = 0
    scores_withdrawn: int = 0
    # Assignments the platform did not know by their deadline: their scores were deleted.
    discarded: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class EntryLimits:
    """What one network address may take of a batch whose workers arrive by its link."""

    places: int  # places the unconfirmed work of the worker ids it brought may hold at once
    new_workers_per_hour: int  # new worker ids it may bring to the batch in an hour


def setting_int(*, batch: CrowdBatch, name: str, default: int, low: int = 1, high: int = _SETTING_MAX) -> int:
    """A whole-number batch setting in [low, high], or its default when unset (a clear error names it)."""
    value = (batch.settings or {}).get(name)
    if value is None:
        return default
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():  # "10" in the JSON
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UserError(f"setting {name} must be a whole number from {low} to {high}, not {value!r}")
    return value


def entry_settings_check(*, batch: CrowdBatch) -> None:
    """Refuse bad per-worker and per-address limits of a batch workers enter by its link."""
    for name in ("units_per_worker", "places_per_address", "workers_per_address_per_hour"):
        setting_int(batch=batch, name=name, default=1)


class Blocking(enum.Enum):
    """What blocking a worker means beyond our own block (annotator_block)."""

    HERE_ONLY = "here only"  # no account on a platform: our own annotators, a link's worker ids
    BY_HAND = "by hand"  # an account on the platform, which offers no call to block it
    ON_PLATFORM = "on the platform"  # block() and unblock() act on the platform


class Provider:
    """A crowd platform. The class attributes say what it offers; the methods take the batch they
    act on. Making one is cheap and calls nothing (a client is made on first use)."""

    name: ClassVar[str] = ""
    # A sandbox beside production: only such a batch may be a production (real money) one.
    has_sandbox: ClassVar[bool] = False
    blocking: ClassVar[Blocking] = Blocking.HERE_ONLY
    # Finished tasks can be deleted on the platform (dispose).
    disposes_tasks: ClassVar[bool] = False
    # Workers arrive by the batch's signed link (/crowd/l/<token>/) and go from unit to unit there.
    enters_by_link: ClassVar[bool] = False
    # The researcher hands that link to a platform themselves (the plan page shows it).
    shows_link: ClassVar[bool] = False
    # Once our page has saved the scores, it hands the assignment in on the platform's own form.
    hands_in_on_platform: ClassVar[bool] = False
    default_reward: ClassVar[str] = "0"

    @classmethod
    def for_batch(cls, *, batch: CrowdBatch) -> Self:
        """The provider that works on the batch's platform (its sandbox or production)."""
        return cls()

    # -- the platform's rules -----------------------------------------------------------------

    def settings_check(self, *, batch: CrowdBatch) -> None:
        """Refuse settings the platform would refuse at publish time (a clear error names them)."""

    def lease_seconds(self, *, batch: CrowdBatch) -> int | None:
        """How long a worker holds a unit (None: the dataset's default)."""
        return int((batch.settings or {}).get("assignment_duration_seconds") or 0) or None

    def reward(self, *, batch: CrowdBatch) -> Decimal:
        """What one assignment pays."""
        return Decimal(str((batch.settings or {}).get("reward", self.default_reward)))

    def fee(self, *, batch: CrowdBatch) -> Decimal:
        """The share of rewards and bonuses the platform charges on top."""
        return Decimal("0")

    def cost_warnings(self, *, batch: CrowdBatch) -> list[str]:
        """What the cost planner should point out about the platform's charges."""
        return []

    def batch_warnings(self, *, batch: CrowdBatch) -> list[str]:
        """What the batch's status should point out about the platform's charges."""
        return []

    def units_per_worker(self, *, batch: CrowdBatch) -> int:
        """How many units one worker arriving by the batch's link scores at most."""
        return setting_int(batch=batch, name="units_per_worker", default=DEFAULT_UNITS_PER_WORKER)

    def entry_limits(self, *, batch: CrowdBatch) -> EntryLimits:
        """Per-address limits of a batch whose workers arrive by its link (settings
        ``places_per_address``, ``workers_per_address_per_hour``): by default two workers' worth
        of places, so a lab or a household behind one address can take part."""
        per_worker = self.units_per_worker(batch=batch)
        return EntryLimits(
            places=setting_int(
                batch=batch, name="places_per_address", default=DEFAULT_WORKERS_PER_ADDRESS * per_worker
            ),
            new_workers_per_hour=setting_int(
                batch=batch, name="workers_per_address_per_hour", default=DEFAULT_WORKERS_PER_ADDRESS_PER_HOUR
            ),
        )

    def link_worker_id(self, *, params: Mapping[str, str]) -> str:
        """The worker id in the query string of the batch's link."""
        return params.get("worker") or params.get("PROLIFIC_PID", "")

    def link_entry_check(self, *, batch: CrowdBatch, params: Mapping[str, str]) -> None:
        """Refuse a worker arriving by the batch's link with the platform's parameters (``params``,
        the query string) when they belong elsewhere. Runs before anything is stored."""

    def link_session(self, *, params: Mapping[str, str]) -> str:
        """The platform's session id in the link's query string, kept with the worker's entry."""
        return ""

    def unit_submitted(self, *, crowd_assignment: CrowdAssignment) -> None:
        """The worker's scores are saved here: what that means for their assignment on our side."""

    def confirmed(self) -> Q:
        """The crowd assignments whose work the platform has confirmed (a filter on CrowdAssignment):
        only their scores count. By default: sync saw the assignment on the platform, for that
        worker and task, submitted or approved."""
        return Q(
            imported_at__isnull=False, status__in=[CrowdAssignmentStatus.SUBMITTED, CrowdAssignmentStatus.APPROVED]
        )

    def confirm_within_seconds(self, *, batch: CrowdBatch) -> int | None:
        """How long after a worker took a unit the platform must know their assignment: past that,
        sync discards work saved here that the platform never saw (None: never discarded here).
        By default the platform's own deadline for the assignment, so an invented worker holds a
        unit no longer than a real one's lease would."""
        return self.lease_seconds(batch=batch) or batch.dataset.lease_minutes * 60

    def reviewed_with(self, *, crowd_assignment: CrowdAssignment) -> QuerySet[CrowdAssignment]:
        """The assignments one review decides: on most platforms the one reviewed."""
        return CrowdAssignment.objects.filter(pk=crowd_assignment.pk)

    # -- what happens on the platform ---------------------------------------------------------

    def publish(self, *, batch: CrowdBatch) -> None:
        """Put the batch's pending tasks on the platform (idempotent: published tasks are skipped)."""

    def sync(self, *, batch: CrowdBatch) -> SyncReport:
        """Import submitted work exactly once (idempotent, safe to re-run after a crash)."""
        return SyncReport()

    def approve(self, *, crowd_assignment: CrowdAssignment, feedback: str, override_rejection: bool = False) -> None:
        """Accept (and pay for) a submission."""

    def reject(self, *, crowd_assignment: CrowdAssignment, feedback: str) -> None:
        """Refuse a submission."""

    def bonus(self, *, bonus: CrowdBonus) -> None:
        raise UserError(f"bonuses are paid on {self.name}'s own site for this provider")

    def block(self, *, worker: Annotator, reason: str, batch: CrowdBatch | None = None) -> None:
        """Keep a worker out on the platform too (ours is done by annotator_block)."""

    def unblock(self, *, worker: Annotator, reason: str, batch: CrowdBatch | None = None) -> None:
        """Undo :meth:`block`."""

    def expire(self, *, batch: CrowdBatch) -> None:
        """Stop new workers from starting the batch's tasks."""

    def dispose(self, *, batch: CrowdBatch) -> int:
        """Delete the batch's finished tasks on the platform; returns how many."""
        raise UserError(f"{self.name} keeps no tasks to delete")

    def balance(self, *, batch: CrowdBatch) -> str | None:
        """Money left on the requester account, when the platform says."""
        return None

    def notify(self, *, batch: CrowdBatch, worker_ids: list[str], subject: str, message: str) -> int:
        """Message workers; returns how many the platform failed to reach."""
        raise UserError(f"{self.name} cannot message workers from here")


def pending_tasks_open(*, batch: CrowdBatch) -> None:
    """Publishing where the units are served by our own pages: the pending tasks open."""
    batch.tasks.filter(status=CrowdTaskStatus.PENDING).update(
        status=CrowdTaskStatus.PUBLISHED, published_at=timezone.now()
    )
