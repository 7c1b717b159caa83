"""MTurk review, money and worker management, call by call, against botocore's Stubber."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdBonus, CrowdTask
from crowd.providers.mturk import MTurkProvider
from crowd.providers.mturk_client import request_token
from crowd.services.batches import crowd_batch_expire
from crowd.services.review import crowd_assignment_review, crowd_bonus_send
from crowd.services.workers import crowd_worker_block

from .conftest import assignment_id, hit_id
from .mturk_helpers import (
    publish,
    submitted,
    work,
)


def test_no_bonus_for_work_that_was_not_submitted(mturk, mturk_batch, mturk_provider):
    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)  # saved here; MTurk has not reported it submitted
    with pytest.raises(UserError, match="bonus is for submitted or approved work"):
        crowd_bonus_send(crowd_assignment=ca, amount=Decimal("0.5"), reason="Careful work", provider=mturk_provider)
    assert not CrowdBonus.objects.exists()


def test_approving_calls_mturk_once_and_a_second_approval_changes_nothing(mturk, mturk_batch, mturk_provider):
    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)
    CrowdAssignment.objects.filter(pk=ca.pk).update(status="submitted")
    ca.refresh_from_db()
    mturk.add_response("approve_assignment", {}, {"AssignmentId": assignment_id(1), "RequesterFeedback": "Thanks"})
    crowd_assignment_review(crowd_assignment=ca, approve=True, feedback="Thanks", provider=mturk_provider)
    crowd_assignment_review(crowd_assignment=ca, approve=True, feedback="Thanks", provider=mturk_provider)
    ca.refresh_from_db()
    assert ca.status == "approved" and ca.reviewed_at is not None


def test_a_rejection_needs_feedback_within_1024_characters(mturk, mturk_batch, mturk_provider):
    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)
    CrowdAssignment.objects.filter(pk=ca.pk).update(status="submitted")
    ca.refresh_from_db()
    with pytest.raises(UserError, match="limit is 1024"):
        crowd_assignment_review(crowd_assignment=ca, approve=False, feedback="x" * 1025, provider=mturk_provider)
    mturk.add_response("reject_assignment", {}, {"AssignmentId": assignment_id(1), "RequesterFeedback": "Too fast."})
    crowd_assignment_review(crowd_assignment=ca, approve=False, feedback="Too fast.", provider=mturk_provider)
    mturk.add_response(
        "approve_assignment",
        {},
        {"AssignmentId": assignment_id(1), "RequesterFeedback": "Sorry", "OverrideRejection": True},
    )
    crowd_assignment_review(
        crowd_assignment=ca, approve=True, feedback="Sorry", override_rejection=True, provider=mturk_provider
    )
    ca.refresh_from_db()
    assert ca.status == "approved"


def test_feedback_with_a_nul_is_refused_before_mturk_is_called(mturk, mturk_batch, mturk_provider):
    # PostgreSQL cannot store it: the review would reach MTurk and then fail here
    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)
    CrowdAssignment.objects.filter(pk=ca.pk).update(status="submitted")
    ca.refresh_from_db()
    with pytest.raises(UserError, match="NUL"):
        crowd_assignment_review(crowd_assignment=ca, approve=False, feedback="Too\x00fast", provider=mturk_provider)
    ca.refresh_from_db()
    assert ca.status == "submitted"


def test_a_bonus_carries_a_token_from_our_ids_and_is_paid_once(mturk, mturk_batch, mturk_provider):
    first, _ = publish(mturk, mturk_batch)
    ca = submitted(work(first, "AW1", 1))
    token = request_token("bonus", "mturk", assignment_id(1), "bonus")
    mturk.add_response(
        "send_bonus",
        {},
        {
            "WorkerId": "AW1",
            "BonusAmount": "0.50",
            "AssignmentId": assignment_id(1),
            "Reason": "Careful work",
            "UniqueRequestToken": token,
        },
    )
    crowd_bonus_send(crowd_assignment=ca, amount=Decimal("0.5"), reason="Careful work", provider=mturk_provider)
    crowd_bonus_send(
        crowd_assignment=ca, amount=Decimal("0.5"), reason="Careful work", provider=mturk_provider
    )  # double click
    assert CrowdBonus.objects.get().status == "paid" and len(token) <= 64


def test_a_bonus_whose_token_was_already_used_is_confirmed_not_paid_again(mturk, mturk_batch, mturk_provider):
    first, _ = publish(mturk, mturk_batch)
    ca = submitted(work(first, "AW1", 1))
    mturk.add_client_error(
        "send_bonus",
        service_error_code="RequestError",
        service_message="The operation has already been performed using the same UniqueRequestToken",
    )
    mturk.add_response(
        "list_bonus_payments",
        {
            "BonusPayments": [
                {"WorkerId": "AW1", "BonusAmount": "0.50", "AssignmentId": assignment_id(1), "Reason": "Careful work"}
            ],
            "NumResults": 1,
        },
        {"AssignmentId": assignment_id(1), "MaxResults": 100},
    )
    bonus = crowd_bonus_send(
        crowd_assignment=ca, amount=Decimal("0.50"), reason="Careful work", provider=mturk_provider
    )
    assert bonus.status == "paid"


def test_soft_block_grants_the_blocking_qualification_and_blocks_here_too(mturk, mturk_batch, mturk_provider):
    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)
    mturk.add_response(
        "associate_qualification_with_worker",
        {},
        {
            "QualificationTypeId": "3QUALTYPE000000000000000000000",
            "WorkerId": "AW1",
            "IntegerValue": 1,
            "SendNotification": False,
        },
    )
    crowd_worker_block(worker=ca.worker, reason="fails checks", batch=mturk_batch, provider=mturk_provider)
    ca.worker.refresh_from_db()
    assert ca.worker.is_blocked


def test_expiring_sets_every_open_hit_to_expire_in_the_past(mturk, mturk_batch, mturk_provider):
    first, second = publish(mturk, mturk_batch)
    for task in (first, second):
        mturk.add_response(
            "update_expiration_for_hit", {}, {"HITId": task.external_id, "ExpireAt": datetime(2015, 1, 1, tzinfo=UTC)}
        )
    crowd_batch_expire(batch=mturk_batch, provider=mturk_provider)
    assert set(mturk_batch.tasks.values_list("status", flat=True)) == {"expired"}


def test_notifying_workers_goes_in_chunks_of_100(mturk, mturk_batch):
    workers = [f"AW{i}" for i in range(150)]
    for group in (sorted(workers)[:100], sorted(workers)[100:]):
        mturk.add_response(
            "notify_workers",
            {"NotifyWorkersFailureStatuses": []},
            {"Subject": "New HITs", "MessageText": "More dialogues", "WorkerIds": group},
        )
    failed = MTurkProvider(client=mturk.client).notify(
        batch=mturk_batch, worker_ids=workers, subject="New HITs", message="More dialogues"
    )
    assert failed == 0


def test_the_account_balance_is_read(mturk, mturk_batch):
    mturk.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
    assert MTurkProvider(client=mturk.client).balance(batch=mturk_batch) == "10000.00"


def test_auto_approval_and_disposal_deadlines_are_warned_about(mturk, mturk_batch):
    from django.utils import timezone

    from crowd.selectors import crowd_batch_warnings

    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)
    CrowdAssignment.objects.filter(pk=ca.pk).update(
        status="submitted", auto_approval_at=timezone.now() + timedelta(hours=3)
    )
    CrowdTask.objects.filter(pk=first.pk).update(published_at=timezone.now() - timedelta(days=115))
    warnings = crowd_batch_warnings(batch=mturk_batch)
    assert any("approved automatically" in w for w in warnings)
    assert any("120 days" in w for w in warnings)


def test_a_hard_block_and_unblock_use_worker_blocks(mturk, dataset, mturk_provider):
    from annotation.models import Annotator
    from crowd.services.batches import crowd_batch_create
    from crowd.services.workers import crowd_worker_unblock

    batch = crowd_batch_create(dataset=dataset, provider="mturk", name="hard", settings={"block": "hard"})
    worker = Annotator.objects.create(provider="mturk", external_id="AW9")
    mturk.add_response("create_worker_block", {}, {"WorkerId": "AW9", "Reason": "spam"})
    mturk.add_response("delete_worker_block", {}, {"WorkerId": "AW9", "Reason": "appeal accepted"})
    crowd_worker_block(worker=worker, reason="spam", batch=batch, provider=mturk_provider)
    crowd_worker_unblock(worker=worker, reason="appeal accepted", batch=batch, provider=mturk_provider)
    worker.refresh_from_db()
    assert not worker.is_blocked


def test_an_approval_whose_answer_was_lost_is_confirmed_by_reading_the_assignment(mturk, mturk_batch, mturk_provider):
    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)
    CrowdAssignment.objects.filter(pk=ca.pk).update(status="submitted")
    ca.refresh_from_db()
    mturk.add_client_error(
        "approve_assignment",
        service_error_code="RequestError",
        service_message="This operation can be called with a status of: Submitted",
    )
    mturk.add_response(
        "get_assignment",
        {"Assignment": {"AssignmentId": assignment_id(1), "AssignmentStatus": "Approved"}},
        {"AssignmentId": assignment_id(1)},
    )
    crowd_assignment_review(crowd_assignment=ca, approve=True, provider=mturk_provider)
    ca.refresh_from_db()
    assert ca.status == "approved"


def test_finished_expired_hits_are_deleted_and_others_kept(mturk, mturk_batch):
    first, second = publish(mturk, mturk_batch)
    CrowdTask.objects.filter(pk__in=[first.pk, second.pk]).update(status="expired")
    mturk.add_response(
        "get_hit",
        {"HIT": {"HITId": hit_id(1), "HITStatus": "Reviewable", "NumberOfAssignmentsPending": 0}},
        {"HITId": hit_id(1)},
    )
    mturk.add_response("delete_hit", {}, {"HITId": hit_id(1)})
    mturk.add_response(
        "get_hit",
        {"HIT": {"HITId": hit_id(2), "HITStatus": "Assignable", "NumberOfAssignmentsPending": 1}},
        {"HITId": hit_id(2)},
    )
    assert MTurkProvider(client=mturk.client).dispose(batch=mturk_batch) == 1
    assert dict(mturk_batch.tasks.values_list("external_id", "status")) == {hit_id(1): "deleted", hit_id(2): "expired"}
