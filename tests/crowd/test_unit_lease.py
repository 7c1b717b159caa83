"""Leasing one given unit (a crowd task names its question) to an annotator."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Annotator, Assignment, AssignmentStatus, QuestionWork
from annotation.services.assignment import unit_lease_question
from core.errors import UserError


@pytest.fixture
def unit(dataset):
    return QuestionWork.objects.filter(dataset=dataset).order_by("question_id").first()


def worker(name: str) -> Annotator:
    return Annotator.objects.create(provider="mturk", external_id=name)


def test_leasing_takes_a_slot_and_the_same_worker_gets_the_same_lease_back(unit):
    w = worker("A1")
    first = unit_lease_question(annotator=w, question_id=unit.pk, lease_seconds=600, provider_ref="R1")
    again = unit_lease_question(annotator=w, question_id=unit.pk, lease_seconds=600, provider_ref="R2")
    unit.refresh_from_db()
    assert first.pk == again.pk and unit.slots_taken == 1
    assert Assignment.objects.get().provider_ref == "R2"


def test_a_full_unit_is_refused(unit):
    for name in ("A1", "A2", "A3"):  # K = 3
        unit_lease_question(annotator=worker(name), question_id=unit.pk)
    with pytest.raises(UserError, match="needs no more annotators"):
        unit_lease_question(annotator=worker("A4"), question_id=unit.pk)
    assert Assignment.objects.count() == 3


def test_an_expired_lease_is_taken_again_while_a_slot_is_free(unit):
    w = worker("A1")
    lease = unit_lease_question(annotator=w, question_id=unit.pk, lease_seconds=60)
    Assignment.objects.filter(pk=lease.pk).update(leased_until=timezone.now() - timedelta(seconds=1))
    again = unit_lease_question(annotator=w, question_id=unit.pk, lease_seconds=60)
    unit.refresh_from_db()
    assert again.status == AssignmentStatus.LEASED and again.leased_until > timezone.now()
    assert unit.slots_taken == 1  # reclaimed, then taken again: not counted twice


def test_a_blocked_worker_gets_nothing(unit):
    w = worker("A1")
    w.is_blocked = True
    w.save()
    with pytest.raises(UserError, match="blocked"):
        unit_lease_question(annotator=w, question_id=unit.pk)
    assert not Assignment.objects.exists()
