"""The requester side of MTurk, call by call, against botocore's Stubber (exact parameters,
validated by the real service model)."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from annotation.crowd import mturk_client
from annotation.crowd.mturk_client import external_question_xml, request_token
from annotation.crowd.services import (
    crowd_assignment_review,
    crowd_batch_expire,
    crowd_batch_publish,
    crowd_batch_sync,
    crowd_bonus_send,
    crowd_worker_block,
)
from annotation.crowd.work import crowd_unit_submit, mturk_enter
from annotation.models import CrowdAssignment, CrowdBonus, CrowdTask, CrowdTaskStatus, Score
from annotation.services.errors import UserError
from annotation.services.submission import Answer

from .conftest import HIT_TYPE, PUBLIC_URL, assignment_id, hit_id

SUBMIT_TO = "https://workersandbox.mturk.com"
EXPIRES = datetime(2030, 1, 1, tzinfo=UTC)


def expect_hit_type(mturk, *, error: str | None = None):
    params = {
        "AutoApprovalDelayInSeconds": 3 * 86400,
        "AssignmentDurationInSeconds": 1800,
        "Reward": "0.25",
        "Title": "Rate replies in short dialogues",
        "Keywords": "dialogue, rating, English, text",
        "Description": "Read a short dialogue and score how well each reply fits it, from 0 to 5.",
        "QualificationRequirements": [
            {
                "QualificationTypeId": "000000000000000000L0",
                "Comparator": "GreaterThanOrEqualTo",
                "IntegerValues": [95],
                "ActionsGuarded": "Accept",
            },
            {
                "QualificationTypeId": "00000000000000000040",
                "Comparator": "GreaterThanOrEqualTo",
                "IntegerValues": [1000],
                "ActionsGuarded": "Accept",
            },
            {
                "QualificationTypeId": "00000000000000000071",
                "Comparator": "In",
                "LocaleValues": [{"Country": "US"}, {"Country": "GB"}],
                "ActionsGuarded": "Accept",
            },
            {
                "QualificationTypeId": "3QUALTYPE000000000000000000000",
                "Comparator": "DoesNotExist",
                "ActionsGuarded": "DiscoverPreviewAndAccept",
            },
        ],
    }
    if error:
        mturk.add_client_error("create_hit_type", service_error_code=error, service_message="Rate exceeded")
    mturk.add_response("create_hit_type", {"HITTypeId": HIT_TYPE}, params)


def hit_params(task: CrowdTask) -> dict:
    return {
        "HITTypeId": HIT_TYPE,
        "MaxAssignments": 3,
        "LifetimeInSeconds": 7 * 86400,
        "Question": external_question_xml(url=f"{PUBLIC_URL}/crowd/mturk/"),
        "RequesterAnnotation": task.token,
        "UniqueRequestToken": f"wc-hit-{task.token}",
    }


def hit(n: int) -> dict:
    return {"HIT": {"HITId": hit_id(n), "HITTypeId": HIT_TYPE, "Expiration": EXPIRES}}


def publish(mturk, batch) -> list[CrowdTask]:
    """Publish the batch with every call answered; returns its tasks."""
    expect_hit_type(mturk)
    tasks = _tasks_after_create(batch)
    for n, task in enumerate(tasks, start=1):
        mturk.add_response("create_hit_with_hit_type", hit(n), hit_params(task))
    crowd_batch_publish(batch=batch, sleep=lambda s: None)
    return list(batch.tasks.order_by("pk"))


def _tasks_after_create(batch) -> list[CrowdTask]:
    """The task rows publish will create (made here first so the expected tokens are known)."""
    from annotation.models import QuestionWork

    for q in QuestionWork.objects.filter(dataset=batch.dataset).order_by("question_id"):
        CrowdTask.objects.get_or_create(
            batch=batch, question_id=q.question_id, defaults={"provider": "mturk", "max_assignments": 3}
        )
    return list(batch.tasks.order_by("pk"))


def work(task: CrowdTask, worker: str, n: int, value: int = 1) -> CrowdAssignment:
    """A worker accepts the HIT and scores the unit on our page."""
    ca = mturk_enter(hit_id=task.external_id, assignment_id=assignment_id(n), worker_id=worker, submit_to=SUBMIT_TO)
    answers = {item["key"]: Answer(value) for item in ca.assignment.items}
    crowd_unit_submit(crowd_assignment=ca, answers=answers)
    return ca


def submitted(ca: CrowdAssignment) -> CrowdAssignment:
    """As a sync would leave it once MTurk reports the assignment submitted."""
    CrowdAssignment.objects.filter(pk=ca.pk).update(status="submitted")
    ca.refresh_from_db()
    return ca


def test_no_bonus_for_work_that_was_not_submitted(mturk, mturk_batch):
    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)  # saved here; MTurk has not reported it submitted
    with pytest.raises(UserError, match="bonus is for submitted or approved work"):
        crowd_bonus_send(crowd_assignment=ca, amount=Decimal("0.5"), reason="Careful work")
    assert not CrowdBonus.objects.exists()


def test_units_that_need_fewer_annotators_get_fewer_assignments(mturk, mturk_batch, monkeypatch):
    from annotation.crowd import mturk as mturk_module
    from annotation.models import QuestionWork

    first_question = QuestionWork.objects.filter(dataset=mturk_batch.dataset).order_by("question_id").first()
    QuestionWork.objects.filter(pk=first_question.pk).update(slots_taken=2)  # two internal annotators have it
    expect_hit_type(mturk)
    monkeypatch.setattr(
        mturk_module.MTurkProvider,
        "_hit",
        lambda self, batch, task, config, url: CrowdTask.objects.filter(pk=task.pk).update(
            external_id=hit_id(task.pk), status="published"
        ),
    )
    crowd_batch_publish(batch=mturk_batch)
    assert list(mturk_batch.tasks.order_by("pk").values_list("max_assignments", flat=True)) == [1, 3]


def listed(n: int, worker: str, task: CrowdTask, status: str = "Submitted", answer: str = "") -> dict:
    return {
        "AssignmentId": assignment_id(n),
        "WorkerId": worker,
        "HITId": task.external_id,
        "AssignmentStatus": status,
        "SubmitTime": datetime(2026, 11, 1, tzinfo=UTC),
        "AutoApprovalTime": datetime(2026, 11, 4, tzinfo=UTC),
        "Answer": answer,
    }


def list_params(task: CrowdTask, token: str | None = None) -> dict:
    params = {"HITId": task.external_id, "AssignmentStatuses": ["Submitted", "Approved", "Rejected"], "MaxResults": 100}
    if token:
        params["NextToken"] = token
    return params


def test_publishing_creates_a_hit_type_and_one_hit_per_unit_with_k_assignments(mturk, mturk_batch):
    tasks = publish(mturk, mturk_batch)
    mturk_batch.refresh_from_db()
    assert mturk_batch.external_id == HIT_TYPE and mturk_batch.status == "published"
    assert [t.external_id for t in tasks] == [hit_id(1), hit_id(2)]
    assert {t.status for t in tasks} == {CrowdTaskStatus.PUBLISHED}


def test_the_sandbox_is_the_default_endpoint_and_production_needs_the_deployment_switch(settings):
    assert mturk_client.endpoint_url(production=False) == "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
    settings.WELLCHOSEN_MTURK_ALLOW_PRODUCTION = False
    with pytest.raises(UserError, match="production MTurk is off"):
        mturk_client.endpoint_url(production=True)


def test_a_production_batch_is_not_published_without_confirmation(mturk_batch):
    mturk_batch.production = True
    with pytest.raises(UserError, match="confirm"):
        crowd_batch_publish(batch=mturk_batch)
    assert not CrowdTask.objects.exists()


def test_throttling_is_retried_with_backoff_then_succeeds(mturk, mturk_batch):
    waits = []
    expect_hit_type(mturk, error="ThrottlingException")
    for n, task in enumerate(_tasks_after_create(mturk_batch), start=1):
        mturk.add_response("create_hit_with_hit_type", hit(n), hit_params(task))
    crowd_batch_publish(batch=mturk_batch, sleep=waits.append)
    mturk_batch.refresh_from_db()
    assert mturk_batch.external_id == HIT_TYPE and waits == [0.0]


def test_throttling_that_never_ends_fails_clearly_and_publishes_nothing(mturk, mturk_batch):
    for _ in range(3):
        mturk.add_client_error("create_hit_type", service_error_code="ServiceUnavailable", service_message="busy")
    with pytest.raises(UserError, match="ServiceUnavailable"):
        crowd_batch_publish(batch=mturk_batch, sleep=lambda s: None)
    assert not CrowdTask.objects.exclude(external_id="").exists()


def test_a_replayed_hit_token_finds_the_hit_the_first_call_created(mturk, mturk_batch):
    expect_hit_type(mturk)
    first, second = _tasks_after_create(mturk_batch)
    mturk.add_client_error(
        "create_hit_with_hit_type",
        service_error_code="RequestError",
        service_message=f"There is already a HIT with this UniqueRequestToken: {hit_id(7)}",
        expected_params=hit_params(first),
    )
    mturk.add_response("get_hit", hit(7), {"HITId": hit_id(7)})
    mturk.add_response("create_hit_with_hit_type", hit(8), hit_params(second))
    crowd_batch_publish(batch=mturk_batch, sleep=lambda s: None)
    assert [t.external_id for t in mturk_batch.tasks.order_by("pk")] == [hit_id(7), hit_id(8)]


def test_publishing_again_after_a_crash_creates_only_the_missing_hits(mturk, mturk_batch):
    expect_hit_type(mturk)
    first, second = _tasks_after_create(mturk_batch)
    mturk.add_response("create_hit_with_hit_type", hit(1), hit_params(first))
    mturk.add_client_error("create_hit_with_hit_type", service_error_code="ServiceFault", service_message="boom")
    with pytest.raises(UserError):
        crowd_batch_publish(batch=mturk_batch, sleep=lambda s: None)
    mturk.add_response("create_hit_with_hit_type", hit(2), hit_params(second))
    crowd_batch_publish(batch=mturk_batch, sleep=lambda s: None)  # no new HIT type, no second HIT 1
    assert [t.external_id for t in mturk_batch.tasks.order_by("pk")] == [hit_id(1), hit_id(2)]


def test_sync_follows_pagination_and_imports_each_assignment_once(mturk, mturk_batch):
    first, second = publish(mturk, mturk_batch)
    work(first, "AW1", 1)
    work(first, "AW2", 2)
    for _ in range(2):  # the second sync finds the same assignments again
        mturk.add_response(
            "list_assignments_for_hit",
            {"Assignments": [listed(1, "AW1", first)], "NumResults": 1, "NextToken": "page-2"},
            list_params(first),
        )
        mturk.add_response(
            "list_assignments_for_hit",
            {"Assignments": [listed(2, "AW2", first)], "NumResults": 1},
            list_params(first, "page-2"),
        )
        mturk.add_response("list_assignments_for_hit", {"Assignments": [], "NumResults": 0}, list_params(second))
    report = crowd_batch_sync(batch=mturk_batch)
    again = crowd_batch_sync(batch=mturk_batch)
    assert (report.imported, report.already_imported) == (2, 0)
    assert (again.imported, again.already_imported) == (0, 2)
    assert CrowdAssignment.objects.filter(status="submitted").count() == 2
    assert Score.objects.filter(assignment_ref__in=[assignment_id(1), assignment_id(2)]).count() == 2 * 2


def test_sync_recovers_scores_that_only_mturk_received(mturk, mturk_batch):
    first, second = publish(mturk, mturk_batch)
    ca = mturk_enter(hit_id=first.external_id, assignment_id=assignment_id(1), worker_id="AW1", submit_to=SUBMIT_TO)
    keys = [item["key"] for item in ca.assignment.items]
    answers = "{" + ",".join(f'"{k}":[4,[]]' for k in keys) + "}"
    xml = (
        '<QuestionFormAnswers xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
        '2005-10-01/QuestionFormAnswers.xsd"><Answer><QuestionIdentifier>answers</QuestionIdentifier>'
        f"<FreeText>{answers}</FreeText></Answer></QuestionFormAnswers>"
    )
    mturk.add_response(
        "list_assignments_for_hit",
        {"Assignments": [listed(1, "AW1", first, answer=xml)], "NumResults": 1},
        list_params(first),
    )
    mturk.add_response("list_assignments_for_hit", {"Assignments": [], "NumResults": 0}, list_params(second))
    report = crowd_batch_sync(batch=mturk_batch)
    assert report.recovered == 1
    assert list(Score.objects.filter(assignment_ref=assignment_id(1)).values_list("value", flat=True)) == [4, 4]


def test_approving_calls_mturk_once_and_a_second_approval_changes_nothing(mturk, mturk_batch):
    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)
    CrowdAssignment.objects.filter(pk=ca.pk).update(status="submitted")
    ca.refresh_from_db()
    mturk.add_response("approve_assignment", {}, {"AssignmentId": assignment_id(1), "RequesterFeedback": "Thanks"})
    crowd_assignment_review(crowd_assignment=ca, approve=True, feedback="Thanks")
    crowd_assignment_review(crowd_assignment=ca, approve=True, feedback="Thanks")
    ca.refresh_from_db()
    assert ca.status == "approved" and ca.reviewed_at is not None


def test_a_rejection_needs_feedback_within_1024_characters(mturk, mturk_batch):
    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)
    CrowdAssignment.objects.filter(pk=ca.pk).update(status="submitted")
    ca.refresh_from_db()
    with pytest.raises(UserError, match="limit is 1024"):
        crowd_assignment_review(crowd_assignment=ca, approve=False, feedback="x" * 1025)
    mturk.add_response("reject_assignment", {}, {"AssignmentId": assignment_id(1), "RequesterFeedback": "Too fast."})
    crowd_assignment_review(crowd_assignment=ca, approve=False, feedback="Too fast.")
    mturk.add_response(
        "approve_assignment",
        {},
        {"AssignmentId": assignment_id(1), "RequesterFeedback": "Sorry", "OverrideRejection": True},
    )
    crowd_assignment_review(crowd_assignment=ca, approve=True, feedback="Sorry", override_rejection=True)
    ca.refresh_from_db()
    assert ca.status == "approved"


def test_a_bonus_carries_a_token_from_our_ids_and_is_paid_once(mturk, mturk_batch):
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
    crowd_bonus_send(crowd_assignment=ca, amount=Decimal("0.5"), reason="Careful work")
    crowd_bonus_send(crowd_assignment=ca, amount=Decimal("0.5"), reason="Careful work")  # double click
    assert CrowdBonus.objects.get().status == "paid" and len(token) <= 64


def test_a_bonus_whose_token_was_already_used_is_confirmed_not_paid_again(mturk, mturk_batch):
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
    bonus = crowd_bonus_send(crowd_assignment=ca, amount=Decimal("0.50"), reason="Careful work")
    assert bonus.status == "paid"


def test_soft_block_grants_the_blocking_qualification_and_blocks_here_too(mturk, mturk_batch):
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
    crowd_worker_block(worker=ca.worker, reason="fails checks", batch=mturk_batch)
    ca.worker.refresh_from_db()
    assert ca.worker.is_blocked


def test_expiring_sets_every_open_hit_to_expire_in_the_past(mturk, mturk_batch):
    first, second = publish(mturk, mturk_batch)
    for task in (first, second):
        mturk.add_response(
            "update_expiration_for_hit", {}, {"HITId": task.external_id, "ExpireAt": datetime(2015, 1, 1, tzinfo=UTC)}
        )
    crowd_batch_expire(batch=mturk_batch)
    assert set(mturk_batch.tasks.values_list("status", flat=True)) == {"expired"}


def test_notifying_workers_goes_in_chunks_of_100(mturk, mturk_batch):
    from annotation.crowd.base import provider_for

    workers = [f"AW{i}" for i in range(150)]
    for group in (sorted(workers)[:100], sorted(workers)[100:]):
        mturk.add_response(
            "notify_workers",
            {"NotifyWorkersFailureStatuses": []},
            {"Subject": "New HITs", "MessageText": "More dialogues", "WorkerIds": group},
        )
    failed = provider_for(batch=mturk_batch).notify(
        batch=mturk_batch, worker_ids=workers, subject="New HITs", message="More dialogues"
    )
    assert failed == 0


def test_the_account_balance_is_read(mturk, mturk_batch):
    from annotation.crowd.base import provider_for

    mturk.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
    assert provider_for(batch=mturk_batch).balance(batch=mturk_batch) == "10000.00"


def test_request_tokens_stay_within_64_characters_and_are_stable():
    long = request_token("bonus", "mturk", "A" * 60, "bonus")
    assert len(long) <= 64 and long == request_token("bonus", "mturk", "A" * 60, "bonus")
    assert request_token("hit", "abc") == "wc-hit-abc"


def test_auto_approval_and_disposal_deadlines_are_warned_about(mturk, mturk_batch):
    from django.utils import timezone

    from annotation.crowd.services import crowd_batch_warnings

    first, _ = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1)
    CrowdAssignment.objects.filter(pk=ca.pk).update(
        status="submitted", auto_approval_at=timezone.now() + timedelta(hours=3)
    )
    CrowdTask.objects.filter(pk=first.pk).update(published_at=timezone.now() - timedelta(days=115))
    warnings = crowd_batch_warnings(batch=mturk_batch)
    assert any("approved automatically" in w for w in warnings)
    assert any("120 days" in w for w in warnings)


def test_the_soft_block_qualification_type_is_created_once_per_batch(mturk, dataset):
    from annotation.crowd.services import crowd_batch_create

    batch = crowd_batch_create(dataset=dataset, provider="mturk", name="fresh", settings={"locales": []})
    mturk.add_response(
        "create_qualification_type",
        {"QualificationType": {"QualificationTypeId": "3NEWQUAL000000000000000000000"}},
        {
            "Name": "WellChosen soft block crowd",
            "Keywords": "wellchosen,block",
            "Description": "Workers with this qualification do not see WellChosen HITs of this dataset.",
            "QualificationTypeStatus": "Active",
        },
    )
    from annotation.crowd.base import provider_for

    provider = provider_for(batch=batch)
    assert provider._soft_block_type(batch) == "3NEWQUAL000000000000000000000"
    assert provider._soft_block_type(batch) == "3NEWQUAL000000000000000000000"  # no second call
    batch.refresh_from_db()
    assert batch.settings["soft_block_qualification_type_id"] == "3NEWQUAL000000000000000000000"


def test_html_question_is_an_option(mturk, dataset):
    from annotation.crowd.mturk_client import html_question_xml
    from annotation.crowd.services import crowd_batch_create

    batch = crowd_batch_create(
        dataset=dataset,
        provider="mturk",
        name="html",
        settings={"reward": "0.25", "question": "html", "block": "hard", "locales": ["US", "GB"]},
    )
    params = {
        "AutoApprovalDelayInSeconds": 3 * 86400,
        "AssignmentDurationInSeconds": 1800,
        "Reward": "0.25",
        "Title": "Rate replies in short dialogues",
        "Keywords": "dialogue, rating, English, text",
        "Description": "Read a short dialogue and score how well each reply fits it, from 0 to 5.",
        "QualificationRequirements": mturk_hit_type_requirements()[:3],
    }
    mturk.add_response("create_hit_type", {"HITTypeId": HIT_TYPE}, params)
    tasks = _tasks_after_create(batch)
    for n, task in enumerate(tasks, start=1):
        mturk.add_response(
            "create_hit_with_hit_type",
            hit(n),
            hit_params(task) | {"Question": html_question_xml(url=f"{PUBLIC_URL}/crowd/mturk/")},
        )
    crowd_batch_publish(batch=batch)
    assert batch.tasks.filter(status="published").count() == 2


def mturk_hit_type_requirements() -> list[dict]:
    return [
        {
            "QualificationTypeId": "000000000000000000L0",
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [95],
            "ActionsGuarded": "Accept",
        },
        {
            "QualificationTypeId": "00000000000000000040",
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [1000],
            "ActionsGuarded": "Accept",
        },
        {
            "QualificationTypeId": "00000000000000000071",
            "Comparator": "In",
            "LocaleValues": [{"Country": "US"}, {"Country": "GB"}],
            "ActionsGuarded": "Accept",
        },
    ]


def test_a_hard_block_and_unblock_use_worker_blocks(mturk, dataset):
    from annotation.crowd.services import crowd_batch_create, crowd_worker_unblock
    from annotation.models import Annotator

    batch = crowd_batch_create(dataset=dataset, provider="mturk", name="hard", settings={"block": "hard"})
    worker = Annotator.objects.create(provider="mturk", external_id="AW9")
    mturk.add_response("create_worker_block", {}, {"WorkerId": "AW9", "Reason": "spam"})
    mturk.add_response("delete_worker_block", {}, {"WorkerId": "AW9", "Reason": "appeal accepted"})
    crowd_worker_block(worker=worker, reason="spam", batch=batch)
    crowd_worker_unblock(worker=worker, reason="appeal accepted", batch=batch)
    worker.refresh_from_db()
    assert not worker.is_blocked


def test_an_approval_whose_answer_was_lost_is_confirmed_by_reading_the_assignment(mturk, mturk_batch):
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
    crowd_assignment_review(crowd_assignment=ca, approve=True)
    ca.refresh_from_db()
    assert ca.status == "approved"


def test_finished_expired_hits_are_deleted_and_others_kept(mturk, mturk_batch):
    from annotation.crowd.base import provider_for

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
    assert provider_for(batch=mturk_batch).dispose(batch=mturk_batch) == 1
    assert dict(mturk_batch.tasks.values_list("external_id", "status")) == {hit_id(1): "deleted", hit_id(2): "expired"}


def test_a_sync_that_dies_midway_is_completed_by_the_next_one_without_duplicates(mturk, mturk_batch):
    first, second = publish(mturk, mturk_batch)
    work(first, "AW1", 1)
    work(second, "AW2", 2)
    mturk.add_response(
        "list_assignments_for_hit", {"Assignments": [listed(1, "AW1", first)], "NumResults": 1}, list_params(first)
    )
    for _ in range(3):  # the second HIT's page never comes
        mturk.add_client_error("list_assignments_for_hit", service_error_code="ServiceUnavailable")
    with pytest.raises(UserError):
        crowd_batch_sync(batch=mturk_batch)
    assert CrowdAssignment.objects.filter(imported_at__isnull=False).count() == 1
    mturk.add_response(
        "list_assignments_for_hit", {"Assignments": [listed(1, "AW1", first)], "NumResults": 1}, list_params(first)
    )
    mturk.add_response(
        "list_assignments_for_hit", {"Assignments": [listed(2, "AW2", second)], "NumResults": 1}, list_params(second)
    )
    report = crowd_batch_sync(batch=mturk_batch)
    assert (report.imported, report.already_imported) == (1, 1)
    assert CrowdAssignment.objects.count() == 2 and Score.objects.count() == 4
