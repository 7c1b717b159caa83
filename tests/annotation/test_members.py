"""Adding existing annotators to a dataset, taking them off, and the annotator's choice of dataset."""

import pytest
from django.urls import reverse

from annotation.models import Annotator, Assignment, AssignmentStatus, DatasetMembership, Score
from annotation.services.annotators_membership import annotator_dataset_choose, member_remove, members_add
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.submission import Answer, unit_submit
from core.errors import UserError
from tests.factories import AnnotatorFactory, CandidateFactory, DatasetFactory, QuestionFactory, UserFactory, staff_with


def _dataset(name: str, questions: int = 3):
    dataset = DatasetFactory(name=name, attention_check_rate=0, adaptive_stopping=False)
    for _ in range(questions):
        question = QuestionFactory(dataset=dataset)
        for i in range(2):
            CandidateFactory(question=question, text=f"{name} reply {question.pk}-{i}")
    annotation_open(dataset=dataset)
    return dataset


def _account(username: str) -> Annotator:
    user = UserFactory(username=username)
    return Annotator.objects.create(user=user, provider="internal", external_id=username)


def _score(annotator, assignment):
    unit_submit(
        assignment_id=assignment.pk,
        annotator=annotator,
        answers={item["key"]: Answer(1) for item in assignment.items},
        duration_ms=5000,
    )


@pytest.fixture
def two(db):
    return _dataset("alpha"), _dataset("beta")


# -- services


def test_members_add_is_idempotent(two):
    alpha, _ = two
    annotator = _account("ann")
    assert members_add(dataset=alpha, annotators=[annotator]) == 1
    assert members_add(dataset=alpha, annotators=[annotator]) == 0
    assert DatasetMembership.objects.filter(dataset=alpha, annotator=annotator).count() == 1


def test_members_add_sets_the_cap_of_an_existing_member(two):
    alpha, _ = two
    annotator = _account("ann")
    members_add(dataset=alpha, annotators=[annotator])
    members_add(dataset=alpha, annotators=[annotator], max_units=4)
    assert DatasetMembership.objects.get(dataset=alpha, annotator=annotator).max_units == 4


def test_members_add_refuses_placeholders_of_imported_scores(two):
    alpha, _ = two
    with pytest.raises(UserError, match="placeholders"):
        members_add(dataset=alpha, annotators=[AnnotatorFactory(provider="imported")])
    assert not DatasetMembership.objects.filter(dataset=alpha).exists()


def test_members_add_refuses_a_bad_cap(two):
    with pytest.raises(UserError, match="cap"):
        members_add(dataset=two[0], annotators=[_account("ann")], max_units=0)


def test_member_remove_keeps_scores_and_the_leased_unit(two):
    alpha, _ = two
    annotator = _account("ann")
    members_add(dataset=alpha, annotators=[annotator])
    _score(annotator, unit_next(annotator=annotator))
    leased = unit_next(annotator=annotator)
    scores = Score.objects.filter(annotator=annotator).count()

    removal = member_remove(dataset=alpha, annotator=annotator)

    assert removal.removed and removal.leased == 1
    assert Score.objects.filter(annotator=annotator).count() == scores > 0
    leased.refresh_from_db()
    assert leased.status == AssignmentStatus.LEASED
    _score(annotator, leased)  # the unit they held can still be submitted
    assert unit_next(annotator=annotator) is None  # and nothing new of the dataset comes


def test_member_remove_is_idempotent(two):
    alpha, _ = two
    annotator = _account("ann")
    assert member_remove(dataset=alpha, annotator=annotator).removed is False


def test_member_remove_resets_a_choice_of_the_dataset(two):
    alpha, beta = two
    annotator = _account("ann")
    members_add(dataset=alpha, annotators=[annotator])
    members_add(dataset=beta, annotators=[annotator])
    annotator_dataset_choose(annotator=annotator, dataset_name="alpha")
    member_remove(dataset=alpha, annotator=annotator)
    annotator.refresh_from_db()
    assert annotator.chosen_dataset is None


def test_choose_refuses_a_dataset_the_annotator_is_no_member_of(two):
    annotator = _account("ann")
    members_add(dataset=two[0], annotators=[annotator])
    with pytest.raises(UserError):
        annotator_dataset_choose(annotator=annotator, dataset_name="beta")


# -- the annotator's choice


@pytest.fixture
def member_of_two(two, client):
    annotator = _account("ann")
    for dataset in two:
        members_add(dataset=dataset, annotators=[annotator])
    client.force_login(annotator.user)
    return annotator


def test_start_page_offers_each_dataset_and_any(client, member_of_two):
    html = client.get(reverse("home")).content.decode()
    assert 'value="*" checked' in html
    assert 'value="alpha"' in html and 'value="beta"' in html


def test_start_page_of_an_annotator_of_one_dataset_has_no_choice(client, two):
    annotator = _account("solo")
    members_add(dataset=two[0], annotators=[annotator])
    client.force_login(annotator.user)
    html = client.get(reverse("home")).content.decode()
    assert 'id="start"' in html and "choose-dataset" not in html


def test_the_next_units_come_from_the_chosen_dataset(client, member_of_two):
    response = client.post(reverse("annotate-choose"), {"dataset": "beta"})
    assert response.status_code == 302 and response.url == reverse("annotate-next")
    for _ in range(3):
        client.get(reverse("annotate-next"))
        assignment = Assignment.objects.get(annotator=member_of_two, status=AssignmentStatus.LEASED)
        assert assignment.question.dataset.name == "beta"
        _score(member_of_two, assignment)
    html = client.get(reverse("annotate-next")).content.decode()  # beta is done; alpha is not offered
    assert "Nothing left to score" in html and 'id="chosen-dataset"' in html
    assert not Assignment.objects.filter(annotator=member_of_two, question__dataset__name="alpha").exists()


def test_choice_is_kept_on_the_account(client, member_of_two):
    client.post(reverse("annotate-choose"), {"dataset": "beta"})
    member_of_two.refresh_from_db()
    assert member_of_two.chosen_dataset.name == "beta"
    assert 'value="beta" checked' in client.get(reverse("home")).content.decode()


def test_any_takes_units_from_every_dataset(client, member_of_two):
    client.post(reverse("annotate-choose"), {"dataset": "beta"})
    client.post(reverse("annotate-choose"), {"dataset": "*"})
    seen = set()
    for _ in range(6):
        assignment = unit_next(annotator=member_of_two)
        seen.add(assignment.question.dataset.name)
        _score(member_of_two, assignment)
    assert seen == {"alpha", "beta"}


@pytest.mark.parametrize("value", ["", "any", "gamma", "x" * 5000])
def test_a_bad_choice_is_a_400(client, member_of_two, value):
    DatasetFactory(name="gamma")  # exists, but they are no member
    response = client.post(reverse("annotate-choose"), {"dataset": value})
    assert response.status_code == 400
    assert 'id="choice-error"' in response.content.decode()
    member_of_two.refresh_from_db()
    assert member_of_two.chosen_dataset is None


def test_choose_is_post_only(client, member_of_two):
    assert client.get(reverse("annotate-choose")).status_code == 405


# -- the dashboard


@pytest.fixture
def researcher(client, two):
    client.force_login(
        staff_with(
            "annotation.view_dataset",
            "annotation.add_datasetmembership",
            "annotation.delete_datasetmembership",
            username="researcher",
        )
    )
    return client


def test_dashboard_lists_members_and_offers_only_non_members(researcher, two):
    alpha, _ = two
    member, other = _account("member"), _account("other")
    members_add(dataset=alpha, annotators=[member])
    html = researcher.get(reverse("dashboard-dataset", args=["alpha"])).content.decode()
    panel = html[html.index('id="members"') :]
    assert reverse("dashboard-members-remove", args=["alpha", member.pk]) in panel
    assert f'<option value="{other.pk}">' in panel and f'<option value="{member.pk}">' not in panel


def test_dashboard_adds_existing_annotators(researcher, two):
    a, b = _account("a"), _account("b")
    response = researcher.post(
        reverse("dashboard-members-add", args=["alpha"]), {"annotators": [a.pk, b.pk], "max_units": "5"}
    )
    assert response.status_code == 302
    assert set(DatasetMembership.objects.filter(dataset__name="alpha").values_list("annotator_id", "max_units")) == {
        (a.pk, 5),
        (b.pk, 5),
    }


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"annotators": ["nope"]},
        {"annotators": ["99999999999999999999999"]},
        {"annotators": ["1"], "max_units": "0"},
    ],
)
def test_dashboard_add_refuses_bad_requests_with_a_400(researcher, two, data):
    response = researcher.post(reverse("dashboard-members-add", args=["alpha"]), data)
    assert response.status_code == 400
    assert not DatasetMembership.objects.filter(dataset__name="alpha").exists()


def test_dashboard_add_refuses_placeholder_annotators(researcher, two):
    placeholder = AnnotatorFactory(provider="imported")
    response = researcher.post(reverse("dashboard-members-add", args=["alpha"]), {"annotators": [placeholder.pk]})
    assert response.status_code == 400


def test_dashboard_removes_a_member(researcher, two):
    member = _account("member")
    members_add(dataset=two[0], annotators=[member])
    response = researcher.post(reverse("dashboard-members-remove", args=["alpha", member.pk]), follow=True)
    assert not DatasetMembership.objects.filter(dataset__name="alpha").exists()
    assert "no longer gets units of alpha" in response.content.decode()


def test_dashboard_member_views_need_their_permissions(client, two):
    member = _account("member")
    client.force_login(staff_with("annotation.view_dataset", username="viewer"))
    assert client.post(reverse("dashboard-members-add", args=["alpha"]), {"annotators": [member.pk]}).status_code == 403
    assert client.post(reverse("dashboard-members-remove", args=["alpha", member.pk])).status_code == 403


# -- the admin


def test_admin_action_adds_annotators_to_a_dataset(admin_client, two):
    a, b = _account("a"), _account("b")
    url = reverse("admin:annotation_annotator_changelist")
    page = admin_client.post(url, {"action": "add_to_dataset_action", "_selected_action": [a.pk, b.pk]})
    assert page.status_code == 200 and "Add annotators to a dataset" in page.content.decode()
    admin_client.post(
        url,
        {"action": "add_to_dataset_action", "_selected_action": [a.pk, b.pk], "dataset": two[1].pk, "apply": "1"},
    )
    assert DatasetMembership.objects.filter(dataset=two[1]).count() == 2


def test_admin_inline_shows_and_removes_memberships(admin_client, two):
    member = _account("member")
    members_add(dataset=two[0], annotators=[member])
    membership = DatasetMembership.objects.get(annotator=member)
    url = reverse("admin:annotation_annotator_change", args=[member.pk])
    assert "datasets this annotator works on" in admin_client.get(url).content.decode().lower()
    data = {
        "user": member.user_id,
        "provider": "internal",
        "external_id": "member",
        "display_name": "",
        "memberships-TOTAL_FORMS": "1",
        "memberships-INITIAL_FORMS": "1",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
        "memberships-0-id": membership.pk,
        "memberships-0-annotator": member.pk,
        "memberships-0-dataset": two[0].pk,
        "memberships-0-max_units": "",
        "memberships-0-DELETE": "on",
    }
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert not DatasetMembership.objects.filter(annotator=member).exists()
