"""Helpers for the MTurk tests: the exact calls botocore's Stubber should expect, and workers who
score units through our ExternalQuestion services."""

from datetime import UTC, datetime

from annotation.services.submission import Answer
from crowd.models import CrowdAssignment, CrowdTask
from crowd.providers.mturk import MTurkProvider
from crowd.providers.mturk_client import external_question_xml
from crowd.providers.mturk_entry import mturk_enter
from crowd.services.batches import crowd_batch_publish
from crowd.services.work import crowd_unit_submit

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
            *mturk_hit_type_requirements(),
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
    tasks = tasks_after_create(batch)
    for n, task in enumerate(tasks, start=1):
        mturk.add_response("create_hit_with_hit_type", hit(n), hit_params(task))
    crowd_batch_publish(batch=batch, provider=MTurkProvider(client=mturk.client, sleep=lambda s: None))
    return list(batch.tasks.order_by("pk"))


def tasks_after_create(batch) -> list[CrowdTask]:
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
