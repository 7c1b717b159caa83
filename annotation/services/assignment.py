"""The assignment engine: hand out units (questions) to annotators under a lease, take their
scores back exactly once, and close a question as soon as its decisions are final.

Correct under concurrency: on PostgreSQL the next unit is chosen with
``SELECT ... FOR UPDATE SKIP LOCKED`` on its QuestionWork row and the annotator row is locked
so that one person holds one unit at a time; on SQLite every write transaction takes the
database's write lock first (``transaction_mode=IMMEDIATE``), which serialises them.
"""

import random
import secrets
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import (
    Annotator,
    Assignment,
    AssignmentStatus,
    Dataset,
    DatasetMembership,
    Question,
    QuestionWork,
)
from annotation.selectors import filter_rules_current, question_open_candidates, questions_still_open
from core.errors import UserError

from .attention_checks import attention_check_pick


def annotation_open(*, dataset: Dataset) -> int:
    """Make every original question of the dataset a unit of work (idempotent); refresh which are
    still open. Returns the number of units."""
    with transaction.atomic():
        missing = Question.objects.filter(dataset=dataset, derived_from__isnull=True, work__isnull=True)
        QuestionWork.objects.bulk_create(
            [
                QuestionWork(question_id=pk, dataset=dataset, slots_needed=dataset.annotators_per_item)
                for pk in missing.values_list("pk", flat=True)
            ],
            ignore_conflicts=True,
        )
        QuestionWork.objects.filter(dataset=dataset).update(slots_needed=dataset.annotators_per_item)
    works_refresh(dataset=dataset)
    return QuestionWork.objects.filter(dataset=dataset).count()


def works_refresh(*, dataset: Dataset, question_ids: list[int] | None = None) -> int:
    """work_refresh for many units of the dataset (of ``question_ids``, or all) at once: one read of
    their score counts and two updates per 500 units. Returns how many units it closed."""
    works = QuestionWork.objects.filter(dataset=dataset)
    if question_ids is not None:
        works = works.filter(question_id__in=question_ids)
    ids = list(works.order_by("question_id").values_list("question_id", flat=True))
    rules, closed = filter_rules_current(), 0
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        still_open = questions_still_open(dataset=dataset, rules=rules, question_ids=chunk)
        chunk_works = QuestionWork.objects.filter(question_id__in=chunk)
        chunk_works.filter(is_open=False, question_id__in=still_open).update(is_open=True)
        closed += chunk_works.filter(is_open=True).exclude(question_id__in=still_open).update(is_open=False)
    return closed


def work_refresh(*, question_id: int) -> bool:
    """Recompute whether the question still has undecided responses; returns is_open."""
    work = QuestionWork.objects.select_related("dataset").get(pk=question_id)
    is_open = bool(
        question_open_candidates(question_id=question_id, dataset=work.dataset, rules=filter_rules_current())
    )
    if is_open != work.is_open:
        QuestionWork.objects.filter(pk=question_id).update(is_open=is_open)
    return is_open


def leases_reclaim(*, now=None) -> int:
    """Expire leases that ran out and give their slots back; returns how many."""
    now = now or timezone.now()
    expired_leases = Assignment.objects.filter(status=AssignmentStatus.LEASED, leased_until__lt=now)
    if not expired_leases.exists():  # the usual case: one index probe, no transaction, no lock
        return 0
    with transaction.atomic():
        expired = list(
            Assignment.objects.select_for_update(skip_locked=True)
            .filter(status=AssignmentStatus.LEASED, leased_until__lt=now)
            .values_list("pk", "question_id")
        )
        if not expired:
            return 0
        Assignment.objects.filter(pk__in=[pk for pk, _ in expired]).update(status=AssignmentStatus.EXPIRED)
        _free_slots([question_id for _, question_id in expired])
    return len(expired)


def _free_slots(question_ids: list[int]) -> None:
    counts: dict[int, int] = {}
    for question_id in question_ids:
        counts[question_id] = counts.get(question_id, 0) + 1
    for question_id, n in counts.items():
        QuestionWork.objects.filter(pk=question_id).update(slots_taken=F("slots_taken") - n)


def unit_current(*, annotator: Annotator) -> Assignment | None:
    """The annotator's unit still under lease (to resume after a pause), if any."""
    return (
        Assignment.objects.filter(annotator=annotator, status=AssignmentStatus.LEASED, leased_until__gte=timezone.now())
        .select_related("question__dataset")  # the unit page shows them
        .order_by("created_at")
        .first()
    )


def unit_next(*, annotator: Annotator, dataset: Dataset | None = None) -> Assignment | None:
    """The annotator's current unit, or a new one leased to them; None when nothing is left."""
    if annotator.is_blocked:
        raise UserError("this annotator is blocked")
    leases_reclaim()
    for _ in range(20):  # a picked question may turn out to have nothing left to score
        with transaction.atomic():
            Annotator.objects.select_for_update().filter(pk=annotator.pk).first()  # one unit per person at a time
            current = unit_current(annotator=annotator)
            if current is not None:
                return current
            work = _pick(annotator=annotator, dataset=dataset)
            if work is None:
                return None
            candidates = question_open_candidates(
                question_id=work.question_id, dataset=work.dataset, rules=filter_rules_current()
            )
            if not candidates:
                QuestionWork.objects.filter(pk=work.pk).update(is_open=False)
                continue
            assignment = _unit_create(
                work=work,
                annotator=annotator,
                candidate_ids=candidates,
                leased_until=timezone.now() + timedelta(minutes=work.dataset.lease_minutes),
            )
            QuestionWork.objects.filter(pk=work.pk).update(slots_taken=F("slots_taken") + 1)
            return assignment
    return None


def _pick(*, annotator: Annotator, dataset: Dataset | None) -> QuestionWork | None:
    memberships = DatasetMembership.objects.filter(annotator=annotator)
    if dataset is not None:
        memberships = memberships.filter(dataset=dataset)
    allowed = []
    for membership in memberships:
        if membership.max_units is not None:
            used = (
                Assignment.objects.filter(annotator=annotator, question__dataset_id=membership.dataset_id)
                .exclude(status__in=[AssignmentStatus.EXPIRED, AssignmentStatus.RELEASED])
                .count()
            )
            if used >= membership.max_units:
                continue
        allowed.append(membership.dataset_id)
    if not allowed:
        return None
    seen = Assignment.objects.filter(annotator=annotator).values("question_id")
    return (
        QuestionWork.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("dataset", "question__dataset")  # the unit page shows the question and its dataset
        .filter(dataset_id__in=allowed, is_open=True, slots_taken__lt=F("slots_needed"))
        .exclude(question_id__in=seen)
        # Finish started questions first: their decisions come sooner, which is what adaptive
        # stopping saves on.
        .order_by("-slots_taken", "question_id")
        .first()
    )


def _unit_create(
    *, work: QuestionWork, annotator: Annotator, candidate_ids: list[int], leased_until, provider_ref: str = ""
) -> Assignment:
    """The annotator's assignment of the unit: its candidates under opaque keys, with an attention
    check in ``attention_check_rate`` of the units, in a shuffled order."""
    rng = random.Random(f"{work.question_id}:{annotator.pk}:{secrets.randbits(32)}")
    items = [{"key": secrets.token_hex(4), "candidate_id": cid} for cid in candidate_ids]
    check = None
    if rng.random() < work.dataset.attention_check_rate:
        check = attention_check_pick(dataset=work.dataset, annotator=annotator, rng=rng)
        if check is not None:
            items.append({"key": secrets.token_hex(4), "check": True, "text": check.text})
    rng.shuffle(items)
    assignment = Assignment(
        question_id=work.question_id,
        annotator=annotator,
        items=items,
        check_utterance=check,
        leased_until=leased_until,
        provider_ref=provider_ref,
    )
    if QuestionWork.question.is_cached(work):  # unit_next loaded it with its dataset for the unit page
        assignment.question = work.question
    assignment.save(force_insert=True)
    return assignment


def unit_lease_question(
    *, annotator: Annotator, question_id: int, lease_seconds: int | None = None, provider_ref: str = ""
) -> Assignment:
    """Lease one given unit to an annotator (a crowd task names its question; unit_next picks one).

    Returns the annotator's lease on it if they hold one; refuses a unit they already scored, one
    that needs nobody else, and blocked annotators."""
    if annotator.is_blocked:
        raise UserError("this annotator is blocked")
    leases_reclaim()
    with transaction.atomic():
        Annotator.objects.select_for_update().filter(pk=annotator.pk).first()
        # The assignment before the question's work row, the order a submission takes them in; and
        # only these rows (OF self), not the dataset row every lease and submission shares.
        existing = (
            Assignment.objects.select_for_update(no_key=True)
            .filter(question_id=question_id, annotator=annotator)
            .first()
        )
        work = (
            QuestionWork.objects.select_for_update(of=("self",), no_key=True)
            .select_related("dataset")
            .filter(pk=question_id)
            .first()
        )
        if work is None:
            raise UserError("this unit is not open for annotation")
        lease = timedelta(seconds=lease_seconds) if lease_seconds else timedelta(minutes=work.dataset.lease_minutes)
        if existing is not None:
            if existing.status == AssignmentStatus.SUBMITTED:
                raise UserError("you have already scored this unit")
            if existing.status == AssignmentStatus.RELEASED:
                raise UserError("this unit was taken back (the annotator was blocked)")
            if existing.status == AssignmentStatus.EXPIRED:
                if work.slots_taken >= work.slots_needed:
                    raise UserError("this unit needs no more annotators")
                QuestionWork.objects.filter(pk=work.pk).update(slots_taken=F("slots_taken") + 1)
            existing.status = AssignmentStatus.LEASED
            existing.leased_until = max(existing.leased_until, timezone.now() + lease)
            existing.provider_ref = provider_ref or existing.provider_ref
            existing.save(update_fields=["status", "leased_until", "provider_ref"])
            return existing
        if not work.is_open or work.slots_taken >= work.slots_needed:
            raise UserError("this unit needs no more annotators")
        candidates = question_open_candidates(
            question_id=question_id, dataset=work.dataset, rules=filter_rules_current()
        )
        if not candidates:
            QuestionWork.objects.filter(pk=work.pk).update(is_open=False)
            raise UserError("this unit needs no more annotators")
        assignment = _unit_create(
            work=work,
            annotator=annotator,
            candidate_ids=candidates,
            leased_until=timezone.now() + lease,
            provider_ref=provider_ref,
        )
        QuestionWork.objects.filter(pk=work.pk).update(slots_taken=F("slots_taken") + 1)
        return assignment
