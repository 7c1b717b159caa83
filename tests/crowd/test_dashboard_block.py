"""The dashboard's block button on a crowd worker: blocked here and, through the provider, on the
platform of every batch they worked in; what happened is in the message."""

from django.contrib.messages import get_messages
from django.urls import reverse

from annotation.models import Annotator
from annotation.services.submission import Answer
from crowd.models import CrowdAssignment
from crowd.providers.mturk_entry import mturk_enter
from crowd.services.batches import crowd_batch_create
from crowd.services.work import crowd_unit_submit

from .conftest import assignment_id, hit_id

SOFT_BLOCK = "3QUALTYPE000000000000000000000"


def worked(worker: str) -> Annotator:
    """An MTurk worker who submitted HIT 1 of the published batch."""
    ca = mturk_enter(
        hit_id=hit_id(1), assignment_id=assignment_id(1), worker_id=worker, submit_to="https://www.mturk.com"
    )
    crowd_unit_submit(crowd_assignment=ca, answers={i["key"]: Answer(4) for i in ca.assignment.items})
    return ca.worker


def press(client, worker: Annotator, action: str) -> str:
    response = client.post(reverse("dashboard-block", args=["crowd", worker.pk]), {"action": action})
    assert response.status_code == 302
    return " ".join(str(m) for m in get_messages(response.wsgi_request))


def expect_soft_block(mturk, worker: str) -> None:
    mturk.add_response(
        "associate_qualification_with_worker",
        {},
        {"QualificationTypeId": SOFT_BLOCK, "WorkerId": worker, "IntegerValue": 1, "SendNotification": False},
    )


def test_blocking_an_mturk_worker_grants_the_soft_block_qualification(admin_client, published_tasks, mturk):
    # given an MTurk worker who worked in a soft-block batch
    worker = worked("AW1")
    # when the researcher blocks them on the dashboard (the Stubber expects the MTurk call)
    expect_soft_block(mturk, "AW1")
    press(admin_client, worker, "block")
    # then they are blocked here too
    worker.refresh_from_db()
    assert worker.is_blocked


def test_the_message_says_the_worker_was_blocked_on_the_platform(admin_client, published_tasks, mturk):
    # given an MTurk worker of batch "pilot"
    worker = worked("AW1")
    expect_soft_block(mturk, "AW1")
    # when the researcher blocks them on the dashboard
    message = press(admin_client, worker, "block")
    # then the message names the batch whose platform blocked them
    assert "Also blocked on the platform for batch(es) pilot (mturk)." in message


def test_a_refusal_by_mturk_is_reported_and_the_worker_stays_blocked_here(admin_client, published_tasks, mturk):
    # given an MTurk worker, and MTurk refusing the qualification
    worker = worked("AW1")
    mturk.add_client_error(
        "associate_qualification_with_worker", service_error_code="RequestError", service_message="No such worker"
    )
    # when the researcher blocks them on the dashboard
    message = press(admin_client, worker, "block")
    # then ours holds and the message says the platform refused
    worker.refresh_from_db()
    assert worker.is_blocked
    assert "The platform refused for pilot (mturk):" in message and "No such worker" in message


def test_unblocking_an_mturk_worker_takes_the_qualification_away(admin_client, published_tasks, mturk):
    # given a blocked MTurk worker of a soft-block batch
    worker = worked("AW1")
    Annotator.objects.filter(pk=worker.pk).update(is_blocked=True)
    mturk.add_response(
        "disassociate_qualification_from_worker",
        {},
        {"WorkerId": "AW1", "QualificationTypeId": SOFT_BLOCK, "Reason": "unblocked by the researcher"},
    )
    # when the researcher unblocks them on the dashboard
    message = press(admin_client, worker, "unblock")
    # then they are unblocked here and on MTurk
    worker.refresh_from_db()
    assert not worker.is_blocked
    assert "Also unblocked on the platform for batch(es) pilot (mturk)." in message


def test_a_hard_block_batch_uses_a_worker_block(admin_client, dataset, mturk):
    # given an MTurk worker with an assignment in a batch set to hard blocks
    batch = crowd_batch_create(dataset=dataset, provider="mturk", name="hard", settings={"block": "hard"})
    worker = Annotator.objects.create(provider="mturk", external_id="AW9")
    CrowdAssignment.objects.create(provider="mturk", external_id=assignment_id(9), batch=batch, worker=worker)
    # when the researcher blocks them on the dashboard
    mturk.add_response("create_worker_block", {}, {"WorkerId": "AW9", "Reason": "quality control"})
    message = press(admin_client, worker, "block")
    # then MTurk was asked for a worker block
    assert "Also blocked on the platform for batch(es) hard (mturk)." in message


def test_a_prolific_worker_is_blocked_here_and_the_message_says_to_block_on_prolific(admin_client, dataset):
    # given a Prolific participant of a study (Prolific has no blocking call)
    batch = crowd_batch_create(dataset=dataset, provider="prolific", name="study")
    worker = Annotator.objects.create(provider="prolific", external_id="5f1a2b")
    CrowdAssignment.objects.create(provider="prolific", external_id="sub-1", batch=batch, worker=worker)
    # when the researcher blocks them on the dashboard
    message = press(admin_client, worker, "block")
    # then they are blocked here and the researcher is told to block them on Prolific's site
    worker.refresh_from_db()
    assert worker.is_blocked
    assert "Not blocked on the platform for study (prolific): do it on the platform's site." in message


def test_an_mturk_worker_without_crowd_assignments_is_blocked_here_only(admin_client, dataset, mturk):
    # given an MTurk worker with no assignment in any batch (the Stubber expects no call)
    worker = Annotator.objects.create(provider="mturk", external_id="AW7")
    # when the researcher blocks them on the dashboard
    message = press(admin_client, worker, "block")
    # then they are blocked here and nothing is said about a platform
    worker.refresh_from_db()
    assert worker.is_blocked and "platform" not in message
