"""The review page: the pair with its edit highlighted, filters, decisions that move on, and
bad request values answered with 400."""

import pytest
from django.urls import reverse

from pairs.models import Review
from tests.factories import staff_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer(client):
    client.force_login(staff_with("pairs.view_pair", "pairs.change_pair", username="rev"))
    return client


def review_url(name="set-a", **query) -> str:
    url = reverse("pairs-review", args=[name])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def submit_url(pair, name="set-a") -> str:
    return reverse("pairs-review-submit", args=[name, pair.pk])


def test_the_page_shows_the_first_pending_pair_with_both_edits_marked(reviewer, built_set):
    first = built_set.pairs.order_by("id").first()
    html = reviewer.get(review_url()).content.decode()
    assert f'data-pair="{first.pk}"' in html
    assert '<mark class="span-incorrect">WRONG</mark>' in html
    word = first.correct[first.correct_start : first.correct_end]
    assert f'<mark class="span-correct">{word}</mark>' in html
    for turn in first.context:
        assert turn.replace("'", "&#x27;") in html


def test_accept_moves_on_to_the_next_pending_pair(reviewer, built_set):
    first, second = built_set.pairs.order_by("id")[:2]
    response = reviewer.post(submit_url(first), {"decision": "accept", "state": "pending"})
    assert response.status_code == 302 and response["Location"].endswith(f"pair={second.pk}")
    first.refresh_from_db()
    assert first.review == Review.ACCEPTED


def test_a_double_click_leaves_one_decision(reviewer, built_set):
    first = built_set.pairs.order_by("id").first()
    reviewer.post(submit_url(first), {"decision": "reject"})
    reviewer.post(submit_url(first), {"decision": "reject"})
    assert built_set.pairs.filter(review=Review.REJECTED).count() == 1


def test_edit_saves_the_text_and_accepts(reviewer, built_set):
    pair = built_set.pairs.get(correct="He wants to borrow the car.")
    reviewer.post(submit_url(pair), {"decision": "edit", "incorrect": "He wants to borrow the boat."})
    pair.refresh_from_db()
    assert (pair.incorrect, pair.review) == ("He wants to borrow the boat.", Review.ACCEPTED)


def test_a_refused_edit_is_a_400_with_the_reason(reviewer, built_set):
    pair = built_set.pairs.first()
    response = reviewer.post(submit_url(pair), {"decision": "edit", "incorrect": pair.correct})
    assert response.status_code == 400
    assert "must differ" in response.content.decode()


def test_an_unknown_decision_is_a_400(reviewer, built_set):
    response = reviewer.post(submit_url(built_set.pairs.first()), {"decision": "delete-all"})
    assert response.status_code == 400


@pytest.mark.parametrize("query", [{"state": "maybe"}, {"type": "nouns"}, {"pair": "x1"}])
def test_bad_filters_are_a_400(reviewer, built_set, query):
    assert reviewer.get(review_url(**query)).status_code == 400


def test_a_pair_of_another_set_is_not_found(reviewer, built_set, pair_dataset):
    from pairs.models import PairSet

    other = PairSet.objects.create(name="other")
    assert reviewer.get(review_url("other", pair=built_set.pairs.first().pk)).status_code == 404
    assert (
        reviewer.post(submit_url(built_set.pairs.first(), name=other.name), {"decision": "accept"}).status_code == 404
    )


def test_filter_by_state_shows_accepted_pairs(reviewer, built_set):
    accepted = built_set.pairs.order_by("-id").first()
    accepted.review = Review.ACCEPTED
    accepted.save()
    html = reviewer.get(review_url(state="accepted")).content.decode()
    assert f'data-pair="{accepted.pk}"' in html and "1 in this list" in html


def test_counts_of_reviewed_and_accepted(reviewer, built_set):
    a, b = built_set.pairs.order_by("id")[:2]
    reviewer.post(submit_url(a), {"decision": "accept"})
    reviewer.post(submit_url(b), {"decision": "reject"})
    html = reviewer.get(review_url()).content.decode()
    assert '<span class="big" id="count-reviewed">2</span>' in html
    assert '<span class="big" id="count-accepted">1</span>' in html


def test_the_page_reads_a_constant_number_of_queries(reviewer, built_set, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        assert reviewer.get(review_url()).status_code == 200


def test_a_viewer_cannot_decide(client, built_set):
    client.force_login(staff_with("pairs.view_pair", username="viewer"))
    assert client.get(review_url()).status_code == 200
    assert client.post(submit_url(built_set.pairs.first()), {"decision": "accept"}).status_code == 403


def test_the_list_shows_each_set_with_its_counts(reviewer, built_set):
    html = reviewer.get(reverse("pairs")).content.decode()
    assert "set-a" in html and reverse("pairs-review", args=["set-a"]) in html
