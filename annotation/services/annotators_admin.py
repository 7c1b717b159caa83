"""Researchers block and unblock annotators; a block can also take their scores out of filtering.

Blocking "everywhere" (the dashboard's button) also blocks on the platforms the annotator works on:
a higher app (crowd) registers a platform block from its AppConfig.ready(), so this app never
imports it.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction

from annotation.models import Annotator, Assignment, AssignmentStatus, QuestionWork

from .assignment import _free_slots, work_refresh


def annotator_block(*, annotator: Annotator, exclude_scores: bool = False) -> int:
    """Block: no new units, open leases released (their slots go to others). With
    ``exclude_scores`` their scores stop counting, so affected questions may reopen.
    Returns the number of released leases."""
    with transaction.atomic():
        Annotator.objects.filter(pk=annotator.pk).update(is_blocked=True, scores_excluded=exclude_scores)
        leased = list(
            Assignment.objects.select_for_update()
            .filter(annotator=annotator, status=AssignmentStatus.LEASED)
            .values_list("pk", "question_id")
        )
        Assignment.objects.filter(pk__in=[pk for pk, _ in leased]).update(status=AssignmentStatus.RELEASED)
        _free_slots([question_id for _, question_id in leased])
    if exclude_scores:
        _refresh_scored(annotator)
    annotator.refresh_from_db()
    return len(leased)


def annotator_unblock(*, annotator: Annotator, include_scores: bool = True) -> None:
    with transaction.atomic():
        Annotator.objects.filter(pk=annotator.pk).update(
            is_blocked=False, scores_excluded=False if include_scores else annotator.scores_excluded
        )
    _refresh_scored(annotator)
    annotator.refresh_from_db()


def _refresh_scored(annotator: Annotator) -> None:
    question_ids = (
        QuestionWork.objects.filter(question__candidates__scores__annotator=annotator)
        .values_list("question_id", flat=True)
        .distinct()
    )
    for question_id in question_ids:
        work_refresh(question_id=question_id)


@dataclass
class BlockReport:
    """What blocking (or unblocking) an annotator everywhere did: leases released here, the places
    (crowd batches) whose platform now blocks them, those whose platform cannot (blocked by hand
    there), and failures."""

    released: int = 0
    on_platform: list[str] = field(default_factory=list)
    by_hand: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def message(self, *, worker: Annotator, block: bool) -> str:
        verb = "blocked" if block else "unblocked"
        parts = [f"{worker} {verb} here" + (f"; {self.released} open unit(s) released." if block else ".")]
        if self.on_platform:
            parts.append(f"Also {verb} on the platform for batch(es) {', '.join(self.on_platform)}.")
        if self.by_hand:
            parts.append(f"Not {verb} on the platform for {', '.join(self.by_hand)}: do it on the platform's site.")
        if self.failed:
            parts.append(f"The platform refused for {'; '.join(self.failed)}.")
        return " ".join(parts)


# A platform block of a higher app: called with the annotator, the reason, whether to block or
# unblock, and the report to add to (a platform that refuses is reported, never raised).
PlatformBlock = Callable[..., None]
_platform_blocks: list[PlatformBlock] = []


def annotator_platform_block_register(platform_block: PlatformBlock) -> None:
    if platform_block not in _platform_blocks:
        _platform_blocks.append(platform_block)


def annotator_block_everywhere(
    *, annotator: Annotator, reason: str, block: bool = True, exclude_scores: bool = False
) -> BlockReport:
    """Block (or unblock) an annotator here, then on every registered platform (crowd: the
    platform of every batch a crowd worker worked in). Ours always happens first."""
    report = BlockReport()
    if block:
        report.released = annotator_block(annotator=annotator, exclude_scores=exclude_scores)
    else:
        annotator_unblock(annotator=annotator)
    for platform_block in _platform_blocks:
        platform_block(worker=annotator, reason=reason, block=block, report=report)
    return report
