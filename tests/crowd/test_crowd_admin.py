"""The crowd admin: plan with the cost estimate, publish (production confirmed), review, bonus."""

from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.services.submission import Answer
from core.models import Job
from crowd.job_params import CrowdPublishParams
from crowd.models import CrowdAssignment, CrowdBatch, CrowdBonus
from crowd.providers.mturk_entry import mturk_enter
from crowd.services.batches import crowd_batch_create
from crowd.services.work import crowd_unit_submit

from .conftest import assignment_id, hit_id


@pytest.fixture
def link_batch(dataset):
    return crowd_batch_create(dataset=dataset, provider="link", name="via-link")


def submitted(n: int, worker: str) -> CrowdAssignment:
    ca = mturk_enter(
        hit_id=hit_id(1), assignment_id=assignment_id(n), worker_id=worker, submit_to="https://www.mturk.com"
    )
    crowd_unit_submit(crowd_assignment=ca, answers={i["key"]: Answer(4) for i in ca.assignment.items})
    CrowdAssignment.objects.filter(pk=ca.pk).update(status="submitted")
    return CrowdAssignment.objects.get(pk=ca.pk)


def test_the_plan_page_shows_the_cost_estimate(admin_client, mturk_batch):
    response = admin_client.get(reverse("admin:crowd_crowdbatch_plan", args=[mturk_batch.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="estimate-total">$1.80<' in html  # 2 units x 3 x $0.25 x 1.2


def test_the_plan_page_says_what_the_dataset_s_stopping_is_expected_to_take(admin_client, mturk_batch):
    html = admin_client.get(reverse("admin:crowd_crowdbatch_plan", args=[mturk_batch.pk])).content.decode()
    assert 'id="estimate-expected">3.00, 3.00<' in html
    assert 'id="estimate-basis">(no adaptive stopping: every response gets K scores)<' in html


def test_the_changelist_lists_batches_with_their_links(admin_client, mturk_batch, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        response = admin_client.get(reverse("admin:crowd_crowdbatch_changelist"))
    assert "plan &amp; publish" in response.content.decode()


def test_publishing_a_link_batch_runs_as_a_job(admin_client, link_batch, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("admin:crowd_crowdbatch_plan", args=[link_batch.pk]), {})
    job = Job.objects.get(kind=CrowdPublishParams.kind)
    assert response["Location"] == reverse("job-detail", args=[job.pk])
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert job.result["published_tasks"] == 2


def test_a_production_batch_needs_the_confirmation_box(admin_client, dataset):
    batch = crowd_batch_create(dataset=dataset, provider="mturk", name="prod", production=True)
    response = admin_client.post(reverse("admin:crowd_crowdbatch_plan", args=[batch.pk]), {})
    assert response.status_code == 200 and "must be confirmed" in response.content.decode()
    assert not Job.objects.exists()


def test_the_review_page_suggests_and_applies_decisions(admin_client, published_tasks, monkeypatch):
    from crowd.providers import mturk

    calls = []
    monkeypatch.setattr(mturk.MTurkProvider, "__init__", lambda self, **kw: None)
    monkeypatch.setattr(mturk.MTurkProvider, "approve", lambda self, **kw: calls.append(kw["crowd_assignment"].pk))
    ca = submitted(1, "AW1")
    url = reverse("admin:crowd_crowdbatch_review", args=[published_tasks[0].batch_id])
    assert "Thank you!" in admin_client.get(url).content.decode()
    admin_client.post(url, {"assignment": [str(ca.pk)], f"decision-{ca.pk}": "approve", f"feedback-{ca.pk}": "Thanks"})
    ca.refresh_from_db()
    assert ca.status == "approved" and calls == [ca.pk]


def test_a_bonus_from_the_admin_is_recorded_once(admin_client, published_tasks, monkeypatch):
    from crowd.providers import mturk

    monkeypatch.setattr(mturk.MTurkProvider, "__init__", lambda self, **kw: None)
    monkeypatch.setattr(mturk.MTurkProvider, "bonus", lambda self, **kw: None)
    ca = submitted(1, "AW1")
    url = reverse("admin:crowd_crowdassignment_bonus", args=[ca.pk])
    data = {"amount": "0.40", "reason": "Great work", "purpose": "bonus"}
    admin_client.post(url, data)
    admin_client.post(url, data)
    assert list(CrowdBonus.objects.values_list("amount", "status")) == [(Decimal("0.40"), "paid")]


def test_approvals_upload_with_a_bad_line_shows_the_error(admin_client, link_batch):
    url = reverse("admin:crowd_crowdbatch_approvals", args=[link_batch.pk])
    response = admin_client.post(url, {"file": SimpleUploadedFile("a.csv", b"worker_id,status\nP1,maybe\n")})
    assert response.status_code == 200 and "line 2, field status" in response.content.decode()


def test_the_balance_action_shows_the_sandbox_balance(admin_client, mturk_batch, mturk):
    mturk.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
    response = admin_client.post(
        reverse("admin:crowd_crowdbatch_changelist"),
        {"action": "balance_action", "_selected_action": [mturk_batch.pk]},
        follow=True,
    )
    assert "(sandbox): balance 10000.00" in response.content.decode()


def test_the_plan_page_shows_the_balance_beside_the_estimate_when_asked(admin_client, mturk_batch, mturk):
    # given the plan page, which offers a balance check without calling MTurk on every view
    url = reverse("admin:crowd_crowdbatch_plan", args=[mturk_batch.pk])
    assert 'id="balance"><a href="?balance=1">check</a>' in admin_client.get(url).content.decode()
    # when the researcher asks for the balance
    mturk.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
    html = admin_client.get(url, {"balance": "1"}).content.decode()
    # then GetAccountBalance's answer is shown in the estimate table
    assert 'id="balance">$10000.00<' in html


def test_blocking_from_the_admin_blocks_here_and_on_mturk(admin_client, published_tasks, mturk):
    ca = submitted(1, "AW1")
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
    admin_client.post(
        reverse("admin:crowd_crowdassignment_changelist"),
        {"action": "block_action", "_selected_action": [ca.pk]},
    )
    ca.worker.refresh_from_db()
    assert ca.worker.is_blocked


def test_review_and_assignment_lists_take_a_fixed_number_of_queries(admin_client, published_tasks):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    review = reverse("admin:crowd_crowdbatch_review", args=[published_tasks[0].batch_id])
    changelist = reverse("admin:crowd_crowdassignment_changelist")

    def count(url: str) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert admin_client.get(url).status_code == 200
        return len(ctx)

    submitted(1, "AW1")
    before = count(review), count(changelist)
    submitted(2, "AW2")
    submitted(3, "AW3")
    assert (count(review), count(changelist)) == before


def test_adding_a_batch_with_bad_mturk_settings_is_refused_in_the_form(admin_client, dataset):
    response = admin_client.post(
        reverse("admin:crowd_crowdbatch_add"),
        {
            "dataset": dataset.pk,
            "name": "bad",
            "provider": "mturk",
            "settings": '{"reward": "1"}',
            "status": "draft",
        },
    )
    assert response.status_code == 200 and "must be dollars with two decimals" in response.content.decode()
    assert not CrowdBatch.objects.exists()


def test_the_plan_page_says_when_production_is_off(admin_client, dataset, settings):
    settings.WELLCHOSEN_MTURK_ALLOW_PRODUCTION = False
    batch = crowd_batch_create(dataset=dataset, provider="mturk", name="prod2", production=True)
    html = admin_client.get(reverse("admin:crowd_crowdbatch_plan", args=[batch.pk])).content.decode()
    assert 'id="production-off"' in html


def test_messaging_the_workers_of_a_batch_notifies_them_on_mturk(admin_client, published_tasks, mturk):
    submitted(1, "AW1")
    submitted(2, "AW2")
    mturk.add_response(
        "notify_workers",
        {"NotifyWorkersFailureStatuses": []},
        {"Subject": "More HITs", "MessageText": "New dialogues tomorrow.", "WorkerIds": ["AW1", "AW2"]},
    )
    url = reverse("admin:crowd_crowdbatch_notify", args=[published_tasks[0].batch_id])
    response = admin_client.post(url, {"subject": "More HITs", "message": "New dialogues tomorrow."}, follow=True)
    assert "Message sent to 2 worker(s), 0 failed." in response.content.decode()


def test_a_batch_added_in_the_admin_is_made_by_the_service(admin_client, dataset):
    # when the researcher adds a link batch in the admin
    response = admin_client.post(
        reverse("admin:crowd_crowdbatch_add"),
        {"dataset": dataset.pk, "name": "from-admin", "provider": "link", "settings": '{"units_per_worker": 2}'},
    )
    # then it is made as crowd_batch_create makes it
    assert response.status_code == 302
    batch = CrowdBatch.objects.get()
    assert (batch.name, batch.provider, batch.status, batch.settings) == (
        "from-admin",
        "link",
        "draft",
        {"units_per_worker": 2},
    )


def test_the_services_refusal_of_a_production_link_batch_is_shown_in_the_form(admin_client, dataset):
    # when the researcher adds a link batch with the production box ticked
    response = admin_client.post(
        reverse("admin:crowd_crowdbatch_add"),
        {"dataset": dataset.pk, "name": "prod-link", "provider": "link", "settings": "{}", "production": "on"},
    )
    # then the form shows crowd_batch_create's refusal and nothing is saved
    assert response.status_code == 200
    assert "only MTurk batches have a sandbox/production switch" in response.content.decode()
    assert not CrowdBatch.objects.exists()


def test_changing_a_draft_batch_to_bad_mturk_settings_is_refused_in_the_form(admin_client, mturk_batch):
    # given a draft MTurk batch, when its reward is changed to one MTurk refuses
    response = admin_client.post(
        reverse("admin:crowd_crowdbatch_change", args=[mturk_batch.pk]),
        {
            "dataset": mturk_batch.dataset_id,
            "name": mturk_batch.name,
            "provider": "mturk",
            "settings": '{"reward": "1"}',
        },
    )
    # then the form shows crowd_batch_update's refusal and the stored settings stay
    assert response.status_code == 200 and "must be dollars with two decimals" in response.content.decode()
    mturk_batch.refresh_from_db()
    assert mturk_batch.settings["reward"] == "0.25"


def test_a_published_batch_keeps_its_provider(published_tasks):
    from core.errors import UserError
    from crowd.services.batches import crowd_batch_update

    batch = published_tasks[0].batch
    with pytest.raises(UserError, match="keeps its dataset, provider and production switch"):
        crowd_batch_update(batch=batch, dataset=batch.dataset, provider="link", name=batch.name, settings={})
    assert CrowdBatch.objects.filter(pk=batch.pk, provider="mturk").exists()
