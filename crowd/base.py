"""One interface for every crowd provider, and the registry that picks one for a batch."""

from dataclasses import dataclass, field
from decimal import Decimal

from annotation.models import Annotator
from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdBatch, CrowdBonus, CrowdProvider


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

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class Provider:
    """A crowd platform. Local bookkeeping lives in the services (crowd.services); a
    provider only does what happens on the platform. Operations a platform lacks raise UserError."""

    name: str = ""
    # Whether block/unblock do something on the platform (else the researcher blocks there by hand).
    blocks_on_platform = False
    # Share of the rewards the platform charges on top (MTurk's depends on the assignments per HIT).
    fee_rate = Decimal("0")

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

    def fee(self, *, batch: CrowdBatch) -> Decimal:
        return self.fee_rate

    def balance(self, *, batch: CrowdBatch) -> str | None:
        """Money left on the requester account, when the platform says."""
        return None

    def notify(self, *, batch: CrowdBatch, worker_ids: list[str], subject: str, message: str) -> int:
        raise UserError(f"{self.name} cannot message workers from here")


class InternalProvider(Provider):
    """WellChosen's own accounts: publishing opens the units, nothing else happens elsewhere."""

    name = CrowdProvider.INTERNAL

    def publish(self, *, batch: CrowdBatch) -> None:
        from django.utils import timezone

        from crowd.models import CrowdTaskStatus

        batch.tasks.filter(status=CrowdTaskStatus.PENDING).update(
            status=CrowdTaskStatus.PUBLISHED, published_at=timezone.now()
        )

    def bonus(self, *, bonus: CrowdBonus) -> None:
        raise UserError("internal annotators are not paid through WellChosen")


def provider_for(*, batch: CrowdBatch, **kwargs) -> Provider:
    """The provider of a batch. ``kwargs`` reach the provider (tests pass a client there)."""
    if batch.provider == CrowdProvider.MTURK:
        from .mturk import MTurkProvider

        return MTurkProvider(batch=batch, **{k: v for k, v in kwargs.items() if k in ("client", "sleep")})
    if batch.provider == CrowdProvider.LINK:
        from .link import LinkProvider

        return LinkProvider()
    if batch.provider == CrowdProvider.PROLIFIC:
        from .prolific import ProlificProvider

        return ProlificProvider(**{k: v for k, v in kwargs.items() if k == "api"})
    if batch.provider == CrowdProvider.INTERNAL:
        return InternalProvider()
    raise UserError(f"provider {batch.provider!r} is not available yet")
