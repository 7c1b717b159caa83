import re
import time

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import Annotator, DatasetMembership
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.invitations import invitation_create, invite_accept
from annotation.services.quality import quality_refresh
from annotation.services.submission import Answer, unit_submit
from core.errors import UserError
from core.models import Job
from tests.factories import (
    AnnotatorFactory,
    CandidateFactory,
    DatasetFactory,
    QuestionFactory,
    UserFactory,
    staff_with,
)


def link_token(dataset) -> str:
    return invitation_create(dataset=dataset)[1]


@pytest.fixture
def dataset(db):
    dataset = DatasetFactory(name="dash", attention_check_rate=0)
    for _ in range(4):
        question = QuestionFactory(dataset=dataset)
        for i in range(3):
            CandidateFactory(question=question, text=f"reply {question.pk}-{i}")
    annotation_open(dataset=dataset)
    for _ in range(3):
        annotator = AnnotatorFactory()
        DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
        assignment = unit_next(annotator=annotator)
        unit_submit(
            assignment_id=assignment.pk,
            annotator=annotator,
            answers={item["key"]: Answer(2) for item in assignment.items},
            duration_ms=9000,
        )
    return dataset


def test_dashboard_shows_progress_agreement_and_annotators(admin_client, dataset):
    quality_refresh(dataset=dataset)
    html = admin_client.get(reverse("dashboard-dataset", args=["dash"])).content.decode()
    assert re.search(r'id="scores">12<', html)  # 3 units x 4 responses
    assert "Krippendorff" in html and "<svg" in html
    assert html.count("imported:annotator-") >= 3


def test_dashboard_query_count_does_not_grow_with_the_dataset(admin_client, dataset, django_assert_max_num_queries):
    quality_refresh(dataset=dataset)
    with django_assert_max_num_queries(26):
        admin_client.get(reverse("dashboard-dataset", args=["dash"]))
    for _ in range(30):
        question = QuestionFactory(dataset=dataset)
        CandidateFactory(question=question)
    annotation_open(dataset=dataset)
    with django_assert_max_num_queries(26):
        admin_client.get(reverse("dashboard-dataset", args=["dash"]))


def test_dashboard_is_for_staff_only(client, dataset):
    client.force_login(UserFactory())
    assert client.get(reverse("dashboard-dataset", args=["dash"])).status_code == 302


def test_refresh_button_runs_the_quality_job(admin_client, dataset, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(reverse("dashboard-refresh", args=["dash"]))
    job = Job.objects.get(kind="quality_refresh")
    assert job.status == "succeeded", job.error
    assert "Krippendorff" in admin_client.get(reverse("dashboard-dataset", args=["dash"])).content.decode()


def test_staff_without_the_dataset_permission_cannot_open_the_dashboard(client, dataset):
    client.force_login(staff_with())
    assert client.get(reverse("dashboard")).status_code == 403
    assert client.get(reverse("dashboard-dataset", args=["dash"])).status_code == 403


def test_staff_that_may_view_datasets_cannot_invite_annotators(client, dataset):
    client.force_login(staff_with("annotation.view_dataset"))
    assert client.get(reverse("dashboard-dataset", args=["dash"])).status_code == 200
    response = client.post(reverse("dashboard-invite", args=["dash"]), {"kind": "account", "username": "newbie"})
    assert response.status_code == 403
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_invite_by_account_shows_the_password_once(admin_client, dataset):
    admin_client.post(
        reverse("dashboard-invite", args=["dash"]), {"kind": "account", "username": "newbie", "max_units": "7"}
    )
    html = admin_client.get(reverse("dashboard-dataset", args=["dash"])).content.decode()
    assert "New account: <code>newbie / " in html
    membership = DatasetMembership.objects.get(annotator__user__username="newbie")
    assert membership.max_units == 7 and membership.dataset == dataset
    assert "New account" not in admin_client.get(reverse("dashboard-dataset", args=["dash"])).content.decode()


def test_invite_link_lets_a_person_sign_up_and_annotate(client, dataset):
    url = reverse("invite-accept", args=[link_token(dataset)])
    response = client.post(url, {"username": "linked", "password": "long-enough-pw"})
    assert response.status_code == 302 and response["Location"] == reverse("annotate-next")
    annotator = Annotator.objects.get(user__username="linked")
    assert DatasetMembership.objects.filter(annotator=annotator, dataset=dataset).exists()
    assert client.get(reverse("annotate-next"), follow=True).status_code == 200


@pytest.mark.parametrize(
    ("username", "password"), [("", "long-enough-pw"), ("   ", "long-enough-pw"), ("linked", "short")]
)
def test_invite_link_needs_a_user_name_and_a_long_enough_password(client, dataset, username, password):
    url = reverse("invite-accept", args=[link_token(dataset)])
    response = client.post(url, {"username": username, "password": password})
    assert response.status_code == 400
    assert "Choose a user name and a password of at least 8 characters." in response.content.decode()
    assert not get_user_model().objects.filter(username="linked").exists()


@pytest.mark.parametrize(
    ("username", "password", "message"),
    [
        ("linked", "", "Choose a user name and a password of at least 8 characters."),
        ("linked", "1234567890", "This password is entirely numeric."),
        ("linked", "password123", "This password is too common."),
        ("linkedperson", "linkedperson1", "The password is too similar to the username."),
        ("bad name!", "long-enough-pw", "Enter a valid username."),
    ],
)
def test_invite_accept_refuses_what_the_password_validators_refuse(dataset, username, password, message):
    token = link_token(dataset)
    with pytest.raises(UserError, match=re.escape(message)):
        invite_accept(token=token, username=username, password=password)
    assert not get_user_model().objects.filter(username=username.strip()).exists()


def test_invite_accept_takes_the_user_name_without_surrounding_spaces(dataset):
    user = invite_accept(token=link_token(dataset), username="  spaced  ", password="long-enough-pw")
    assert user.get_username() == "spaced"


def test_the_sign_up_form_asks_for_the_minimum_length_in_the_browser(client, dataset):
    html = client.get(reverse("invite-accept", args=[link_token(dataset)])).content.decode()
    assert 'name="password" required minlength="8"' in html


@pytest.mark.parametrize("username", ["", "  ", "bad name!"])
def test_invite_by_account_needs_a_valid_user_name(admin_client, dataset, username):
    users = get_user_model().objects.count()
    response = admin_client.post(
        reverse("dashboard-invite", args=["dash"]), {"kind": "account", "username": username}, follow=True
    )
    expected = "Enter a valid username." if username.strip() else "Give a user name."
    assert expected in response.content.decode()
    assert get_user_model().objects.count() == users


def test_a_tampered_invite_link_is_refused(client, dataset):
    token = link_token(dataset)
    response = client.get(reverse("invite-accept", args=[token[:-2] + "xx"]))
    assert response.status_code == 400 and "not valid" in response.content.decode()


def test_block_from_the_dashboard(admin_client, dataset):
    annotator = Annotator.objects.filter(scores__isnull=False).first()
    admin_client.post(reverse("dashboard-block", args=["dash", annotator.pk]), {"action": "block", "exclude": "1"})
    annotator.refresh_from_db()
    assert annotator.is_blocked and annotator.scores_excluded
    admin_client.post(reverse("dashboard-block", args=["dash", annotator.pk]), {"action": "unblock"})
    annotator.refresh_from_db()
    assert not annotator.is_blocked and not annotator.scores_excluded


def test_dashboard_index_says_when_overall_agreement_is_not_computed_yet(admin_client, dataset):
    html = admin_client.get(reverse("dashboard")).content.decode()
    assert "dash" in html
    assert "agreement appears after the first agreement refresh" in html


def test_dashboard_index_shows_the_overall_agreement_of_the_last_refresh(admin_client, dataset):
    # given a refresh of one dataset's agreement (which also refreshes the site-wide numbers)
    quality_refresh(dataset=dataset)
    # when the researcher opens the index
    html = admin_client.get(reverse("dashboard")).content.decode()
    # then alpha and kappa over every dataset's scores are shown: three annotators scored the same
    # four responses, all alike (alpha is undefined without variation; kappa has its items)
    assert re.search(
        r'id="overall">All datasets: Krippendorff.s α n/a over 4 items; .* over the 4 items with 3 raters', html
    )


def test_the_site_wide_agreement_is_recomputed_at_most_once_per_interval(dataset, monkeypatch):
    from annotation.services import quality

    # given a dataset refreshed twice within the interval
    calls = []
    monkeypatch.setattr(quality, "overall_agreement_refresh", lambda: calls.append(1))
    quality_refresh(dataset=dataset)
    quality_refresh(dataset=dataset)
    # then the site-wide agreement (every score of the site) was computed once
    assert len(calls) == 1


def test_the_site_wide_agreement_is_recomputed_after_the_interval(dataset, monkeypatch, settings):
    from annotation.services import quality

    settings.WELLCHOSEN_OVERALL_AGREEMENT_SECONDS = 1
    calls = []
    monkeypatch.setattr(quality, "overall_agreement_refresh", lambda: calls.append(1))
    quality_refresh(dataset=dataset)
    time.sleep(1.1)  # the interval passes
    quality_refresh(dataset=dataset)
    assert len(calls) == 2


def test_dashboard_index_does_not_compute_agreement_per_request(admin_client, dataset, django_assert_max_num_queries):
    quality_refresh(dataset=dataset)
    admin_client.get(reverse("dashboard"))
    # sessions, user, datasets, and a handful of aggregates per dataset: no per-score reads
    with django_assert_max_num_queries(12):
        admin_client.get(reverse("dashboard"))
