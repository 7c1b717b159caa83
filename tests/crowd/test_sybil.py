"""Made-up worker ids on the batches workers enter by a link (a link batch, a Prolific study):
the ids one network address brings are limited, their unconfirmed work gives its places back once
the batch's bound has passed, and only a worker who scored their share sees the completion code.
Everything goes through the real pages with Django's test client."""

from datetime import timedelta

import pytest
from django.db.models import Sum
from django.test import Client
from django.urls import reverse

from annotation.models import Annotator, Assignment, QuestionWork, Score
from annotation.services.assignment import annotation_open
from crowd.models import CrowdAssignment, CrowdLinkEntry
from crowd.providers.link import link_token
from crowd.providers.prolific import ProlificApi, ProlificProvider
from crowd.services.batches import crowd_batch_create, crowd_batch_publish, crowd_batch_sync
from crowd.services.work import address_key
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory

from .link_helpers import keys, work_through
from .prolific_double import TOKEN

ATTACKER = "203.0.113.7"


@pytest.fixture
def units(db):
    """Six units of two responses, two annotators each: twelve places."""
    dataset = DatasetFactory(name="sybil", annotators_per_item=2, adaptive_stopping=False, attention_check_rate=0)
    for i in range(6):
        CandidateFactory(question=QuestionFactory(dataset=dataset), text=f"The shop opens at {i}.")
    annotation_open(dataset=dataset)
    return dataset


@pytest.fixture
def link(units):
    batch = crowd_batch_create(dataset=units, provider="link", name="link", settings={"units_per_worker": 2})
    crowd_batch_publish(batch=batch)
    batch.refresh_from_db()
    return batch


@pytest.fixture
def provider(prolific):
    return ProlificProvider(api=ProlificApi(base_url=prolific.url, token=TOKEN, sleep=lambda s: None))


@pytest.fixture
def study(units, provider):
    batch = crowd_batch_create(
        dataset=units, provider="prolific", name="study", settings={"reward": "1.50", "units_per_worker": 2}
    )
    crowd_batch_publish(batch=batch, provider=provider)
    batch.refresh_from_db()
    return batch


def places_held(dataset) -> int:
    return QuestionWork.objects.filter(dataset=dataset).aggregate(n=Sum("slots_taken"))["n"]


def shown_code(response, batch) -> bool:
    return batch.completion_code in response.content.decode()


def invented(batch, worker: str, address: str):
    """Someone at ``address`` opens the link under a made-up id and scores every unit offered."""
    client = Client(REMOTE_ADDR=address)
    if batch.provider == "link":
        return work_through(client, batch, worker=worker)
    params = {"PROLIFIC_PID": worker, "STUDY_ID": batch.external_id, "SESSION_ID": f"S{worker}"}
    return work_through(client, batch, params=params)


def bound_passed(hours: float) -> None:
    """Every crowd assignment was taken ``hours`` ago."""
    for ca in CrowdAssignment.objects.all():
        CrowdAssignment.objects.filter(pk=ca.pk).update(created_at=ca.created_at - timedelta(hours=hours))


# -- a link batch -------------------------------------------------------------------------------


def test_invented_ids_from_one_address_hold_no_more_than_its_places(link, units):
    pages = [invented(link, f"SYBIL{n}", ATTACKER) for n in range(5)]
    # two ids' share (2 x units_per_worker); the third id gets no unit, the fourth and fifth no entry
    assert places_held(units) == 4
    assert [page.status_code for page in pages] == [200, 200, 429, 429, 429]
    assert not Annotator.objects.filter(external_id__in=["SYBIL3", "SYBIL4"]).exists()


def test_ids_refused_by_the_address_limits_are_shown_no_completion_code(link):
    pages = [invented(link, f"SYBIL{n}", ATTACKER) for n in range(5)]
    assert [shown_code(page, link) for page in pages] == [True, True, False, False, False]


def test_an_address_may_bring_new_ids_again_an_hour_later(link):
    for n in range(3):
        Client(REMOTE_ADDR=ATTACKER).get(reverse("crowd-link", args=[link_token(batch=link)]), {"worker": f"W{n}"})
    CrowdLinkEntry.objects.update(created_at=CrowdLinkEntry.objects.first().created_at - timedelta(minutes=61))
    page = Client(REMOTE_ADDR=ATTACKER).get(reverse("crowd-link", args=[link_token(batch=link)]), {"worker": "W9"})
    assert page.status_code == 302 and CrowdLinkEntry.objects.count() == 4


def test_unconfirmed_link_work_gives_its_places_back_once_the_bound_has_passed(link, units):
    for n in range(5):
        invented(link, f"SYBIL{n}", f"198.51.100.{n + 1}")
    assert places_held(units) == 10
    assert crowd_batch_sync(batch=link).discarded == [] and places_held(units) == 10
    bound_passed(72 + 0.1)  # the batch's confirm_within_hours, by default
    report = crowd_batch_sync(batch=link)
    assert len(report.discarded) == 10
    assert places_held(units) == 0 and not Score.objects.exists()
    assert set(CrowdAssignment.objects.values_list("status", flat=True)) == {"discarded"}


def test_a_real_worker_gets_the_places_back_after_the_bound(link, units):
    for n in range(6):
        invented(link, f"SYBIL{n}", f"198.51.100.{n + 1}")
    assert not shown_code(invented(link, "REAL1", "192.0.2.1"), link)  # nothing left
    bound_passed(73)
    crowd_batch_sync(batch=link)
    page = invented(link, "REAL1", "192.0.2.1")
    assert shown_code(page, link)
    assert Score.objects.filter(annotator__external_id="REAL1").count() == 2 * 2  # two units of two responses


def test_the_batch_warns_a_day_before_unapproved_link_work_is_discarded(link):
    from crowd.selectors import crowd_batch_warnings

    invented(link, "P1", "192.0.2.1")
    assert crowd_batch_warnings(batch=link) == []
    bound_passed(72 - 23)
    (warning,) = crowd_batch_warnings(batch=link)
    assert warning.startswith("2 submission(s) nobody approved or rejected yet will be discarded within 24 hours")


def test_the_periodic_sync_discards_link_work_past_the_bound(link, units, django_capture_on_commit_callbacks):
    from crowd.tasks import crowd_sync_due_job

    invented(link, "SYBIL1", ATTACKER)
    bound_passed(73)
    with django_capture_on_commit_callbacks(execute=True):
        crowd_sync_due_job.delay()
    assert places_held(units) == 0 and not Score.objects.exists()


def test_approved_link_work_is_kept_after_the_bound(client, link, units, write_file):
    from crowd.services.review import link_approvals_import

    invented(link, "P1", "192.0.2.1")
    link_approvals_import(batch=link, path=write_file("approvals.csv", "worker_id,status\nP1,APPROVED\n"))
    bound_passed(73)
    assert crowd_batch_sync(batch=link).discarded == []
    assert Score.objects.filter(counted=True).count() == 2 * 2 and places_held(units) == 2


def test_an_approvals_file_naming_discarded_work_counts_it_and_approves_the_rest(link, write_file):
    from crowd.services.review import link_approvals_import

    invented(link, "LATE", "192.0.2.1")
    bound_passed(73)
    crowd_batch_sync(batch=link)
    invented(link, "P1", "192.0.2.2")
    path = write_file("approvals.csv", "worker_id,status\nLATE,APPROVED\nP1,APPROVED\n")
    counts = link_approvals_import(batch=link, path=path)
    assert counts["discarded"] == 2 and counts["approved"] == 2  # two units each
    assert set(CrowdAssignment.objects.filter(worker__external_id="LATE").values_list("status", flat=True)) == {
        "discarded"
    }


def one_place_each(share: int):
    """A link batch of three units with one place each."""
    dataset = DatasetFactory(name="one-each", annotators_per_item=1, adaptive_stopping=False, attention_check_rate=0)
    for i in range(3):
        CandidateFactory(question=QuestionFactory(dataset=dataset), text=f"The bus leaves at {i}.")
    annotation_open(dataset=dataset)
    batch = crowd_batch_create(dataset=dataset, provider="link", name="all", settings={"units_per_worker": share})
    crowd_batch_publish(batch=batch)
    batch.refresh_from_db()
    return batch


def test_no_completion_code_before_the_worker_scored_their_share(db):
    batch = one_place_each(share=3)
    # given the first unit's only place held by someone else's lease
    Client(REMOTE_ADDR="198.51.100.1").get(
        reverse("crowd-link", args=[link_token(batch=batch)]), {"worker": "HOLDER"}, follow=True
    )
    # when a worker scores the two units left for them
    page = invented(batch, "LATECOMER", "192.0.2.1")
    # then they are told to come back for the third, not given the code
    assert Assignment.objects.filter(annotator__external_id="LATECOMER", status="submitted").count() == 2
    assert not shown_code(page, batch) and "come back later" in page.content.decode()


def test_a_worker_whose_other_units_are_all_scored_by_others_gets_the_code(db):
    # given two of the three units scored by another worker
    batch = one_place_each(share=2)
    invented(batch, "EARLY", "198.51.100.1")
    # when a worker scores the one unit left
    page = invented(batch, "LAST", "192.0.2.1")
    # then nobody can score more now: that was their share
    assert Assignment.objects.filter(annotator__external_id="LAST", status="submitted").count() == 1
    assert shown_code(page, batch)


def test_an_id_that_submits_nothing_valid_is_shown_no_code(link):
    client = Client(REMOTE_ADDR="192.0.2.1")
    page = client.get(reverse("crowd-link", args=[link_token(batch=link)]), {"worker": "NOBODY"}, follow=True)
    for _ in range(3):
        html = page.content.decode()
        action = html.split('id="unit-form" action="')[1].split('"')[0]
        assert client.post(action, {f"score-{k}": "9" for k in keys(html)}).status_code == 400
        page = client.get(reverse("crowd-link-next", args=[link_token(batch=link)]), follow=True)
    assert not shown_code(page, link) and not Score.objects.exists()


def test_a_worker_whose_lease_ran_out_can_still_score_their_whole_share(units):
    batch = crowd_batch_create(dataset=units, provider="link", name="all", settings={"units_per_worker": 6})
    crowd_batch_publish(batch=batch)
    batch.refresh_from_db()
    client = Client(REMOTE_ADDR="192.0.2.1")
    client.get(reverse("crowd-link", args=[link_token(batch=batch)]), {"worker": "PAUSED"}, follow=True)
    Assignment.objects.update(leased_until=Assignment.objects.get().leased_until - timedelta(days=1))
    page = work_through(client, batch, worker="PAUSED")
    assert Assignment.objects.filter(annotator__external_id="PAUSED", status="submitted").count() == 6
    assert shown_code(page, batch)


def test_bad_limits_are_refused_when_the_batch_is_made(units):
    from core.errors import UserError

    for settings in (
        {"confirm_within_hours": 0},
        {"places_per_address": "many"},
        {"workers_per_address_per_hour": True},
        {"units_per_worker": -1},
    ):
        with pytest.raises(UserError, match=f"setting {next(iter(settings))} must be a whole number"):
            crowd_batch_create(dataset=units, provider="link", name=str(settings), settings=settings)


def test_a_limit_typed_as_digits_is_taken_and_other_digits_are_refused(units):
    from core.errors import UserError
    from crowd.providers.link import LinkProvider

    batch = crowd_batch_create(dataset=units, provider="link", name="text", settings={"places_per_address": "7"})
    assert LinkProvider().entry_limits(batch=batch).places == 7
    with pytest.raises(UserError, match="setting places_per_address must be a whole number"):
        crowd_batch_create(dataset=units, provider="link", name="sup", settings={"places_per_address": "\u00b2"})


def test_an_ipv6_subscriber_is_one_address():
    assert address_key("2001:db8:1:2::1") == address_key("2001:db8:1:2:ffff::9")
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:192.0.2.1") == address_key("192.0.2.1")


# -- a Prolific study ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"PROLIFIC_PID": "PID1", "SESSION_ID": "S1"},
        {"PROLIFIC_PID": "PID1", "STUDY_ID": "study0001"},
        {"PROLIFIC_PID": "PID1", "STUDY_ID": "study0999", "SESSION_ID": "S1"},
        {"worker": "PID1", "STUDY_ID": "study0001", "SESSION_ID": "S1"},
    ],
    ids=["no STUDY_ID", "no SESSION_ID", "another study", "no PROLIFIC_PID"],
)
def test_a_visit_prolific_did_not_send_is_refused_and_stores_nothing(client, study, params):
    response = client.get(reverse("crowd-link", args=[link_token(batch=study)]), params)
    assert response.status_code == 403
    assert not Annotator.objects.exists() and not CrowdLinkEntry.objects.exists()
    assert not CrowdAssignment.objects.exists()


def test_invented_pids_from_one_address_hold_no_more_than_its_places(study, units):
    pages = [invented(study, f"SYBIL{n}", ATTACKER) for n in range(5)]
    assert places_held(units) == 4
    assert [shown_code(page, study) for page in pages] == [True, True, False, False, False]


def test_invented_pids_give_their_places_back_once_the_bound_has_passed(study, units, provider):
    for n in range(5):
        invented(study, f"SYBIL{n}", f"198.51.100.{n + 1}")
    assert places_held(units) == 10
    bound_passed(1)  # the dataset's lease (30 minutes): Prolific has no submission of theirs
    report = crowd_batch_sync(batch=study, provider=provider)
    assert len(report.discarded) == 10 and places_held(units) == 0 and not Score.objects.exists()


def test_a_participant_who_returned_the_study_gives_their_places_back(study, units, prolific, provider):
    invented(study, "PID1", "192.0.2.1")
    prolific.add_submission(study.external_id, "PID1", status="RETURNED")
    bound_passed(1)
    report = crowd_batch_sync(batch=study, provider=provider)
    assert len(report.discarded) == 2 and places_held(units) == 0


def test_a_participant_from_prolific_is_let_in_and_their_session_kept(study):
    page = invented(study, "PID1", "192.0.2.1")
    assert shown_code(page, study)
    assert CrowdLinkEntry.objects.get().session == "SPID1"
