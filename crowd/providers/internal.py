"""WellChosen's own annotator accounts as a crowd provider: publishing opens the units on our
annotator pages; nothing happens anywhere else."""

from django.db.models import Q

from core.errors import UserError
from crowd.models import CrowdBatch, CrowdBonus, CrowdProvider

from .base import Provider, pending_tasks_open


class InternalProvider(Provider):
    name = CrowdProvider.INTERNAL

    def confirmed(self) -> Q:
        # Our own accounts: nobody else to ask. Every row (an empty Q() would exclude() nothing).
        return Q(pk__isnull=False)

    def confirm_within_seconds(self, *, batch: CrowdBatch) -> int | None:
        return None

    def publish(self, *, batch: CrowdBatch) -> None:
        pending_tasks_open(batch=batch)

    def bonus(self, *, bonus: CrowdBonus) -> None:
        raise UserError("internal annotators are not paid through WellChosen")
