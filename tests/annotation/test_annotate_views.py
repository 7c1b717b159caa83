import re

import pytest
from django.urls import reverse

from annotation.models import Annotator, Assignment, AssignmentStatus, DatasetMembership, Score
from annotation.services.assignment import annotation_open
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory, UserFactory

XSS = '<script>alert("x")</script> and <i>italics</i>'


@pytest.fixture
def setup(db, client):
    dataset = DatasetFactory(name="views", adaptive_stopping=False, attention_check_rate=0)
    question = QuestionFactory(dataset=dataset)
    CandidateFactory(question=question, text="The train leaves at six.")
    CandidateFactory(question=question, text=XSS)
    annotation_open(dataset=dataset)
    user = UserFactory(username="ann")
    annotator = Annotator.objects.create(user=user, provider="internal", external_id="ann")
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    client.force_login(user)
    return question, annotator


def unit_page(client):
    response = client.get(reverse("annotate-next"), follow=True)
    assert response.status_code == 200
    return response


def unit_url(response) -> str:
    """The unit's own URL, where its form posts (the next unit is shown at /annotate/ itself)."""
    return re.search(r'action="([^"]+)"[^>]*id="unit-form"', response.content.decode()).group(1)


def keys(html: str) -> list[str]:
    return re.findall(r'name="score-([0-9a-f]+)" value="0"', html)


def test_the_next_unit_opens_with_context_and_responses(client, setup):
    question, _ = setup
    html = unit_page(client).content.decode()
    for turn in question.context.turns.all():
        assert turn.text in html
    assert html.count('class="response"') == 3 and len(keys(html)) == 3


def test_nothing_in_the_page_reveals_the_ground_truth(client, setup):
    question, _ = setup
    html = unit_page(client).content.decode()
    assert "ground" not in html.lower() and "candidate" not in html.lower()
    # apart from the fixed 0-5 score values, no attribute carries a candidate id
    attributes = re.findall(r'(?:id|name|value|class|data-[\w-]+)="([^"]*)"', re.sub(r'type="radio"[^>]*>', "", html))
    ids = {str(pk) for pk in question.candidates.values_list("id", flat=True)}
    numbered = [
        m.group(1) for a in attributes if (m := re.fullmatch(r"[A-Za-z_-]*(\d+)", a)) and not a.startswith("response-")
    ]
    assert not ids & set(numbered)
    # response ids are positions in this page, the same for any unit
    assert re.findall(r'id="(response-\d+)"', html) == ["response-1", "response-2", "response-3"]


def test_utterance_markup_is_shown_as_text(client, setup):
    html = unit_page(client).content.decode()
    assert "<script>alert" not in html and "<i>italics</i>" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html and "&lt;i&gt;italics&lt;/i&gt;" in html


def test_posting_scores_stores_them_and_moves_on(client, setup):
    response = unit_page(client)
    html = response.content.decode()
    data = {f"score-{k}": "1" for k in keys(html)} | {"duration_ms": "4200"}
    done = client.post(unit_url(response), data, follow=True)
    assert "Nothing left to score" in done.content.decode()
    assert Score.objects.count() == 3
    assert Assignment.objects.get().duration_ms == 4200


def test_a_double_click_stores_the_scores_once(client, setup):
    response = unit_page(client)
    url = unit_url(response)
    data = {f"score-{k}": "2" for k in keys(response.content.decode())}
    client.post(url, data)
    client.post(url, data)
    assert Score.objects.count() == 3


def test_a_missing_score_keeps_the_entered_ones(client, setup):
    response = unit_page(client)
    url = unit_url(response)
    first, *_ = keys(response.content.decode())
    again = client.post(url, {f"score-{first}": "4"})
    html = again.content.decode()
    assert again.status_code == 400 and "2 response(s) have no score yet" in html
    assert re.search(rf'name="score-{first}" value="4" checked', html)
    assert not Score.objects.exists()


def test_pause_keeps_the_unit_for_later(client, setup):
    first = unit_url(unit_page(client))
    paused = client.get(reverse("annotate-pause")).content.decode()
    assert "Your unit is kept for you until" in paused
    assert unit_url(unit_page(client)) == first


def test_someone_elses_unit_is_not_found(client, setup):
    url = unit_url(unit_page(client))
    other = UserFactory(username="other")
    Annotator.objects.create(user=other, provider="internal", external_id="other")
    client.force_login(other)
    assert client.get(url).status_code == 404


def test_an_account_without_annotator_profile_is_told_so(client, db):
    client.force_login(UserFactory(username="nobody"))
    response = client.get(reverse("annotate-next"))
    assert response.status_code == 403 and "not set up as an annotator" in response.content.decode()


def test_the_unit_page_query_count_is_small(client, setup, django_assert_max_num_queries):
    url = unit_url(unit_page(client))
    with django_assert_max_num_queries(12):
        client.get(url)


def test_an_expired_unit_says_so(client, setup):
    url = unit_url(unit_page(client))
    Assignment.objects.update(status=AssignmentStatus.EXPIRED)
    assert "no longer yours" in client.get(url).content.decode()


def test_the_open_counter_moves_after_a_submission(db, client):
    dataset = DatasetFactory(name="counter", adaptive_stopping=False, attention_check_rate=0, annotators_per_item=1)
    for _ in range(3):
        CandidateFactory(question=QuestionFactory(dataset=dataset), text="A reply.")
    annotation_open(dataset=dataset)
    user = UserFactory(username="counter")
    annotator = Annotator.objects.create(user=user, provider="internal", external_id="counter")
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    client.force_login(user)
    opened = []
    for _ in range(2):
        response = client.get(reverse("annotate-next"))
        opened.append(int(re.search(r"Open <strong>(\d+)</strong>", response.content.decode()).group(1)))
        html = response.content.decode()
        client.post(unit_url(response), {f"score-{k}": "1" for k in keys(html)} | {"duration_ms": "4000"})
    assert opened == [2, 1]  # the unit being scored is not open to them; each submission takes one more


def test_reasons_are_folded_behind_add_a_reason(setup, client):
    html = unit_page(client).content.decode()
    assert html.count("<summary>add a reason") == 3  # one per response
    assert "<details open>" not in html
