"""Prolific through its REST API, against a local HTTP double that checks every request."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.models import Score
from crowd.models import CrowdAssignment
from crowd.providers.link import link_token
from crowd.providers.prolific import ProlificApi, ProlificProvider
from crowd.services.batches import crowd_batch_create, crowd_batch_expire, crowd_batch_publish, crowd_batch_sync
from crowd.services.review import crowd_assignment_review, crowd_bonus_send

from .prolific_double import TOKEN


@pytest.fixture
def api(prolific):
    return ProlificApi(base_url=prolific.url, token=TOKEN, sleep=lambda s: None)


@pytest.fixture
def study(dataset, api):
    batch = crowd_batch_create(dataset=dataset, provider="prolific", name="prolific", settings={"reward": "1.50"})
    crowd_batch_publish(batch=batch, provider=ProlificProvider(api=api))
    batch.refresh_from_db()
    return batch


def keys(html: str) -> list[str]:
    return re.findall(r'name="score-([0-9a-f]+)" value="0"', html)


def participate(client, batch, pid: str) -> str:
    """A participant arrives from Prolific and scores every unit; returns the last page."""
    client.cookies.clear()
    address = f"192.0.2.{sum(pid.encode()) % 250 + 1}"  # participants at home: one address each
    response = client.get(
        reverse("crowd-link", args=[link_token(batch=batch)]),
        {"PROLIFIC_PID": pid, "STUDY_ID": batch.external_id, "SESSION_ID": f"s-{pid}"},
        follow=True,
        REMOTE_ADDR=address,
    )
    for _ in range(5):
        html = response.content.decode()
        if not keys(html):
            return html
        action = re.search(r'id="unit-form" action="([^"]+)"', html).group(1)
        response = client.post(action, {f"score-{k}": "1" for k in keys(html)}, follow=True, REMOTE_ADDR=address)
    return response.content.decode()


def test_publishing_creates_and_publishes_one_study_with_k_places(prolific, study):
    (body,) = prolific.sent("POST", "/api/v1/studies/")
    assert body["total_available_places"] == 3 and body["reward"] == 150
    assert body["completion_codes"][0]["code"] == study.completion_code
    assert body["external_study_url"].startswith("https://wellchosen.example.org/crowd/l/")
    assert prolific.studies[study.external_id]["status"] == "ACTIVE"


def test_publishing_again_creates_no_second_study(prolific, study, api):
    crowd_batch_publish(batch=study, provider=ProlificProvider(api=api))
    assert len(prolific.studies) == 1


def test_a_study_created_before_a_crash_is_found_by_its_internal_name(prolific, dataset, api):
    batch = crowd_batch_create(dataset=dataset, provider="prolific", name="p2", settings={"reward": "1.00"})
    prolific.studies["study0099"] = {"id": "study0099", "internal_name": batch.token, "status": "UNPUBLISHED"}
    crowd_batch_publish(batch=batch, provider=ProlificProvider(api=api))
    batch.refresh_from_db()
    assert batch.external_id == "study0099" and not prolific.sent("POST", "/api/v1/studies/")


def test_a_participant_scores_every_unit_and_gets_the_completion_code(client, study):
    html = participate(client, study, "PID1")
    assert study.completion_code in html
    assert Score.objects.filter(annotator__provider="prolific", annotator__external_id="PID1").count() == 4


def test_a_link_for_another_study_is_refused(client, study):
    response = client.get(
        reverse("crowd-link", args=[link_token(batch=study)]), {"PROLIFIC_PID": "PID1", "STUDY_ID": "other"}
    )
    assert response.status_code == 403 and "another Prolific study" in response.content.decode()


def test_sync_pages_through_submissions_and_imports_each_once(client, prolific, study, api):
    for pid in ("PID1", "PID2", "PID3"):
        participate(client, study, pid)
        prolific.add_submission(study.external_id, pid)
    first = crowd_batch_sync(batch=study, provider=ProlificProvider(api=api))
    again = crowd_batch_sync(batch=study, provider=ProlificProvider(api=api))
    assert (first.seen, first.imported, first.already_imported) == (3, 3, 0)
    assert (again.imported, again.already_imported) == (0, 3)
    assert len(prolific.sent("GET", "/api/v1/studies/study0001/submissions/")) == 4  # 2 pages, twice
    assert set(CrowdAssignment.objects.values_list("status", flat=True)) == {"submitted"}


def test_approve_and_reject_are_prolific_transitions(client, prolific, study, api):
    for pid in ("PID1", "PID2"):
        participate(client, study, pid)
        prolific.add_submission(study.external_id, pid)
    crowd_batch_sync(batch=study, provider=ProlificProvider(api=api))
    one = CrowdAssignment.objects.filter(worker__external_id="PID1").first()
    two = CrowdAssignment.objects.filter(worker__external_id="PID2").first()
    crowd_assignment_review(crowd_assignment=one, approve=True, provider=ProlificProvider(api=api))
    crowd_assignment_review(
        crowd_assignment=two, approve=False, feedback="Failed checks.", provider=ProlificProvider(api=api)
    )
    statuses = {s["participant_id"]: s["status"] for s in prolific.submissions.values()}
    assert statuses == {"PID1": "APPROVED", "PID2": "REJECTED"}
    assert set(CrowdAssignment.objects.filter(worker__external_id="PID1").values_list("status", flat=True)) == {
        "approved"
    }


def test_a_bonus_is_set_up_and_paid_once(client, prolific, study, api):
    participate(client, study, "PID1")
    prolific.add_submission(study.external_id, "PID1")
    crowd_batch_sync(batch=study, provider=ProlificProvider(api=api))
    ca = CrowdAssignment.objects.filter(worker__external_id="PID1").first()
    crowd_bonus_send(crowd_assignment=ca, amount=Decimal("0.75"), reason="Thanks", provider=ProlificProvider(api=api))
    crowd_bonus_send(crowd_assignment=ca, amount=Decimal("0.75"), reason="Thanks", provider=ProlificProvider(api=api))
    assert prolific.sent("POST", "/api/v1/submissions/bonus-payments/")[0]["csv_bonuses"] == "PID1,0.75"
    assert prolific.paid == ["bonus0001"]


def test_a_bonus_retried_after_a_crash_pays_the_bulk_bonus_set_up_before_it(client, prolific, study, api):
    from crowd.models import CrowdBonus

    # given a bonus whose bulk payment was set up, and then the process died before paying it
    participate(client, study, "PID1")
    prolific.add_submission(study.external_id, "PID1")
    crowd_batch_sync(batch=study, provider=ProlificProvider(api=api))
    ca = CrowdAssignment.objects.filter(worker__external_id="PID1").first()
    prolific.fail_pay = [400]  # the pay call of the first attempt never went through
    with pytest.raises(Exception, match="HTTP 400"):
        crowd_bonus_send(
            crowd_assignment=ca, amount=Decimal("0.75"), reason="Thanks", provider=ProlificProvider(api=api)
        )
    assert CrowdBonus.objects.get().external_ref == "bonus0001" and prolific.paid == []
    # when the bonus is sent again
    crowd_bonus_send(crowd_assignment=ca, amount=Decimal("0.75"), reason="Thanks", provider=ProlificProvider(api=api))
    # then the same bulk bonus is paid, once, and no second one is set up
    assert len(prolific.sent("POST", "/api/v1/submissions/bonus-payments/")) == 1
    assert prolific.paid == ["bonus0001"]
    assert CrowdBonus.objects.get().status == "paid"


def test_rate_limited_requests_are_retried(prolific, study, api):
    prolific.fail_next = [429, 503]
    crowd_batch_sync(batch=study, provider=ProlificProvider(api=api))
    assert len(prolific.sent("GET", "/api/v1/studies/study0001/submissions/")) == 3


def test_expiring_stops_the_study(prolific, study, api):
    crowd_batch_expire(batch=study, provider=ProlificProvider(api=api))
    assert prolific.studies[study.external_id]["status"] == "COMPLETED"


def counted(pid: str) -> int:
    return Score.objects.filter(annotator__external_id=pid, counted=True).count()


def test_a_participants_scores_count_once_prolific_has_their_submission(client, prolific, study, api):
    participate(client, study, "PID1")
    assert Score.objects.filter(annotator__external_id="PID1").count() == 4 and counted("PID1") == 0
    prolific.add_submission(study.external_id, "PID1")
    report = crowd_batch_sync(batch=study, provider=ProlificProvider(api=api))
    assert report.scores_confirmed == 4 and counted("PID1") == 4


def test_an_invented_participant_id_is_discarded_once_its_lease_has_passed(client, prolific, study, api):
    from datetime import timedelta

    participate(client, study, "NOT-A-PARTICIPANT")
    CrowdAssignment.objects.update(created_at=CrowdAssignment.objects.first().created_at - timedelta(days=1))
    report = crowd_batch_sync(batch=study, provider=ProlificProvider(api=api))
    assert len(report.discarded) == 2 and not Score.objects.exists()
    assert set(CrowdAssignment.objects.values_list("status", flat=True)) == {"discarded"}
