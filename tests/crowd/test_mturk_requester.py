"""MTurk publishing and sync, call by call, against botocore's Stubber (exact parameters,
validated by the real service model)."""

import pytest

from annotation.models import Score
from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdTask, CrowdTaskStatus
from crowd.providers import mturk_client
from crowd.providers.mturk import MTurkProvider
from crowd.providers.mturk_client import request_token
from crowd.providers.mturk_entry import mturk_enter
from crowd.services.batches import crowd_batch_publish, crowd_batch_sync

from .conftest import HIT_TYPE, PUBLIC_URL, assignment_id, hit_id
from .mturk_helpers import (
    SUBMIT_TO,
    expect_hit_type,
    hit,
    hit_params,
    list_params,
    listed,
    mturk_hit_type_requirements,
    publish,
    tasks_after_create,
    work,
)


def test_units_that_need_fewer_annotators_get_fewer_assignments(mturk, mturk_batch, monkeypatch, mturk_provider):
    from annotation.models import QuestionWork
    from crowd.providers import mturk as mturk_module

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
    crowd_batch_publish(batch=mturk_batch, provider=mturk_provider)
    assert list(mturk_batch.tasks.order_by("pk").values_list("max_assignments", flat=True)) == [1, 3]


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
    for n, task in enumerate(tasks_after_create(mturk_batch), start=1):
        mturk.add_response("create_hit_with_hit_type", hit(n), hit_params(task))
    crowd_batch_publish(batch=mturk_batch, provider=MTurkProvider(client=mturk.client, sleep=waits.append))
    mturk_batch.refresh_from_db()
    assert mturk_batch.external_id == HIT_TYPE and waits == [0.0]


def test_throttling_that_never_ends_fails_clearly_and_publishes_nothing(mturk, mturk_batch, mturk_provider):
    for _ in range(3):
        mturk.add_client_error("create_hit_type", service_error_code="ServiceUnavailable", service_message="busy")
    with pytest.raises(UserError, match="ServiceUnavailable"):
        crowd_batch_publish(batch=mturk_batch, provider=mturk_provider)
    assert not CrowdTask.objects.exclude(external_id="").exists()


@pytest.mark.parametrize(
    "code, message",
    [
        ("RequestError", "There is already a HIT with this UniqueRequestToken: {hit}"),
        ("HitAlreadyExists", "HIT {hit} already exists for this token"),
    ],
)
def test_a_replayed_hit_token_finds_the_hit_the_first_call_created(mturk, mturk_batch, code, message, mturk_provider):
    expect_hit_type(mturk)
    first, second = tasks_after_create(mturk_batch)
    mturk.add_client_error(
        "create_hit_with_hit_type",
        service_error_code=code,
        service_message=message.format(hit=hit_id(7)),
        expected_params=hit_params(first),
    )
    mturk.add_response("get_hit", hit(7), {"HITId": hit_id(7)})
    mturk.add_response("create_hit_with_hit_type", hit(8), hit_params(second))
    crowd_batch_publish(batch=mturk_batch, provider=mturk_provider)
    assert [t.external_id for t in mturk_batch.tasks.order_by("pk")] == [hit_id(7), hit_id(8)]


def test_publishing_again_after_a_crash_creates_only_the_missing_hits(mturk, mturk_batch, mturk_provider):
    expect_hit_type(mturk)
    first, second = tasks_after_create(mturk_batch)
    mturk.add_response("create_hit_with_hit_type", hit(1), hit_params(first))
    mturk.add_client_error("create_hit_with_hit_type", service_error_code="ServiceFault", service_message="boom")
    with pytest.raises(UserError):
        crowd_batch_publish(batch=mturk_batch, provider=mturk_provider)
    mturk.add_response("create_hit_with_hit_type", hit(2), hit_params(second))
    crowd_batch_publish(batch=mturk_batch, provider=mturk_provider)  # no new HIT type, no second HIT 1
    assert [t.external_id for t in mturk_batch.tasks.order_by("pk")] == [hit_id(1), hit_id(2)]


def test_sync_follows_pagination_and_imports_each_assignment_once(mturk, mturk_batch, mturk_provider):
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
    report = crowd_batch_sync(batch=mturk_batch, provider=mturk_provider)
    again = crowd_batch_sync(batch=mturk_batch, provider=mturk_provider)
    assert (report.imported, report.already_imported) == (2, 0)
    assert (again.imported, again.already_imported) == (0, 2)
    assert CrowdAssignment.objects.filter(status="submitted").count() == 2
    assert Score.objects.filter(assignment_ref__in=[assignment_id(1), assignment_id(2)]).count() == 2 * 2


def test_sync_recovers_scores_that_only_mturk_received(mturk, mturk_batch, mturk_provider):
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
    report = crowd_batch_sync(batch=mturk_batch, provider=mturk_provider)
    assert report.recovered == 1
    assert list(Score.objects.filter(assignment_ref=assignment_id(1)).values_list("value", flat=True)) == [4, 4]


def test_request_tokens_stay_within_64_characters_and_are_stable():
    long = request_token("bonus", "mturk", "A" * 60, "bonus")
    assert len(long) <= 64 and long == request_token("bonus", "mturk", "A" * 60, "bonus")
    assert request_token("hit", "abc") == "wc-hit-abc"


def test_the_soft_block_qualification_type_is_created_once_per_batch(mturk, dataset):
    from crowd.services.batches import crowd_batch_create

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
    provider = MTurkProvider(client=mturk.client)
    assert provider._soft_block_type(batch) == "3NEWQUAL000000000000000000000"
    assert provider._soft_block_type(batch) == "3NEWQUAL000000000000000000000"  # no second call
    batch.refresh_from_db()
    assert batch.settings["soft_block_qualification_type_id"] == "3NEWQUAL000000000000000000000"


def test_html_question_is_an_option(mturk, dataset, mturk_provider):
    from crowd.providers.mturk_client import html_question_xml
    from crowd.services.batches import crowd_batch_create

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
    tasks = tasks_after_create(batch)
    for n, task in enumerate(tasks, start=1):
        mturk.add_response(
            "create_hit_with_hit_type",
            hit(n),
            hit_params(task) | {"Question": html_question_xml(url=f"{PUBLIC_URL}/crowd/mturk/")},
        )
    crowd_batch_publish(batch=batch, provider=mturk_provider)
    assert batch.tasks.filter(status="published").count() == 2


def test_a_sync_that_dies_midway_is_completed_by_the_next_one_without_duplicates(mturk, mturk_batch, mturk_provider):
    first, second = publish(mturk, mturk_batch)
    work(first, "AW1", 1)
    work(second, "AW2", 2)
    mturk.add_response(
        "list_assignments_for_hit", {"Assignments": [listed(1, "AW1", first)], "NumResults": 1}, list_params(first)
    )
    for _ in range(3):  # the second HIT's page never comes
        mturk.add_client_error("list_assignments_for_hit", service_error_code="ServiceUnavailable")
    with pytest.raises(UserError):
        crowd_batch_sync(batch=mturk_batch, provider=mturk_provider)
    assert CrowdAssignment.objects.filter(imported_at__isnull=False).count() == 1
    mturk.add_response(
        "list_assignments_for_hit", {"Assignments": [listed(1, "AW1", first)], "NumResults": 1}, list_params(first)
    )
    mturk.add_response(
        "list_assignments_for_hit", {"Assignments": [listed(2, "AW2", second)], "NumResults": 1}, list_params(second)
    )
    report = crowd_batch_sync(batch=mturk_batch, provider=mturk_provider)
    assert (report.imported, report.already_imported) == (1, 1)
    assert CrowdAssignment.objects.count() == 2 and Score.objects.count() == 4


def test_missing_aws_credentials_are_a_clear_error_not_a_crash():
    from botocore.exceptions import NoCredentialsError

    from crowd.providers.mturk_client import MTurk, MTurkError

    class NoCredentialsClient:
        def get_account_balance(self):
            raise NoCredentialsError()

    # when a call is made without credentials, then the error says how to give them
    with pytest.raises(MTurkError, match="no AWS credentials"):
        MTurk(NoCredentialsClient(), sleep=lambda s: None).call("get_account_balance")
