"""MTurk's ExternalQuestion: the page MTurk frames, in preview and once accepted; scores saved
here first, then the worker's form goes to turkSubmitTo/mturk/externalSubmit."""

import re

import pytest
from django.urls import reverse

from annotation.models import Annotator, Assignment, Score
from crowd.models import CrowdAssignment
from tests.csp import csp_directives

from .conftest import assignment_id, hit_id

SANDBOX = "https://workersandbox.mturk.com"


def accepted(client, *, n=1, worker="AW1", hit=1, submit_to=SANDBOX):
    return client.get(
        reverse("crowd-mturk"),
        {"assignmentId": assignment_id(n), "hitId": hit_id(hit), "workerId": worker, "turkSubmitTo": submit_to},
    )


def keys(html: str) -> list[str]:
    return re.findall(r'name="score-([0-9a-f]+)" value="0"', html)


def action(html: str) -> str:
    return re.search(r'id="unit-form" action="([^"]+)"', html).group(1)


def submit(client, html: str, value: str = "2"):
    return client.post(action(html), {f"score-{k}": value for k in keys(html)} | {"duration_ms": "9000"})


def test_preview_shows_the_unit_with_inputs_disabled_and_creates_nothing(client, published_tasks):
    response = client.get(reverse("crowd-mturk"), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": hit_id(1)})
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="preview-notice"' in html
    radios = re.findall(r'<input type="radio"[^>]*>', html)
    assert radios and all("disabled" in r for r in radios)
    assert not Assignment.objects.exists() and not Annotator.objects.exists()


def test_preview_does_not_reveal_the_ground_truth(client, published_tasks):
    html = client.get(
        reverse("crowd-mturk"), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": hit_id(1)}
    ).content.decode()
    question = published_tasks[0].question
    assert question.ground_truth in html
    assert "ground" not in html.lower() and "candidate" not in html.lower()
    # response keys are random, as on the annotator page: nothing ties them to candidates
    assert all(re.fullmatch(r"[0-9a-f]{8}", k) for k in re.findall(r'name="score-([^"]+)" value="0"', html))


def test_the_page_may_be_framed_by_mturk_only(client, published_tasks):
    response = accepted(client)
    assert "X-Frame-Options" not in response
    policy = csp_directives(response["Content-Security-Policy"])
    assert policy["frame-ancestors"] == ["'self'", SANDBOX, "https://www.mturk.com", "https://worker.mturk.com"]


def test_the_framed_page_keeps_the_rest_of_the_site_policy(client, published_tasks, settings):
    policy = csp_directives(accepted(client)["Content-Security-Policy"])
    site = settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]
    assert {name: values for name, values in policy.items() if name != "frame-ancestors"} == {
        name: values for name, values in site.items() if name != "frame-ancestors"
    }


def test_an_accepted_hit_leases_the_unit_to_a_worker_without_an_account(client, published_tasks):
    response = accepted(client)
    assert response.status_code == 200 and len(keys(response.content.decode())) == 2
    worker = Annotator.objects.get()
    assert (worker.provider, worker.external_id, worker.user) == ("mturk", "AW1", None)
    assert Assignment.objects.get().provider_ref == assignment_id(1)
    assert client.session["crowd_assignments"] == [CrowdAssignment.objects.get().pk]


def test_submitting_saves_scores_first_then_posts_to_mturk(client, published_tasks):
    html = accepted(client).content.decode()
    response = submit(client, html)
    page = response.content.decode()
    assert response.status_code == 200
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in page
    assert f'name="assignmentId" value="{assignment_id(1)}"' in page
    assert list(Score.objects.values_list("assignment_ref", "value")) == [(assignment_id(1), 2)] * 2


def test_the_submit_page_may_post_to_mturk_and_follow_its_redirect(client, published_tasks):
    # Chrome checks form-action against every redirect after the post too, wherever MTurk sends
    # the worker next; the page's other directives stay (no inline script: it loads a static file)
    response = submit(client, accepted(client).content.decode())
    policy = csp_directives(response["Content-Security-Policy"])
    assert "form-action" not in policy
    assert policy["script-src"] == ["'self'"] and policy["frame-ancestors"][0] == "'self'"
    assert "<script>" not in response.content.decode()


def test_a_double_submit_stores_the_scores_once(client, published_tasks):
    html = accepted(client).content.decode()
    submit(client, html)
    again = submit(client, html)
    assert again.status_code == 200 and Score.objects.count() == 2


def test_missing_scores_are_refused_with_the_form_kept(client, published_tasks):
    html = accepted(client).content.decode()
    response = client.post(action(html), {f"score-{keys(html)[0]}": "3"})
    assert response.status_code == 400 and "no score yet" in response.content.decode()
    assert not Score.objects.exists()


@pytest.mark.parametrize(
    "submit_to",
    ["https://evil.example.com", "http://workersandbox.mturk.com", "https://workersandbox.mturk.com.evil.io", ""],
)
def test_turk_submit_to_outside_the_allow_list_is_refused(client, published_tasks, submit_to):
    response = accepted(client, submit_to=submit_to)
    assert response.status_code == 403 and "not an allowed MTurk address" in response.content.decode()
    assert not CrowdAssignment.objects.exists()


def test_a_test_host_can_be_allowed_by_setting(client, published_tasks, settings):
    settings.WELLCHOSEN_CROWD_SUBMIT_HOSTS = ["https://mturk.test"]
    html = accepted(client, submit_to="https://mturk.test").content.decode()
    assert 'action="https://mturk.test/mturk/externalSubmit"' in submit(client, html).content.decode()


def test_an_unknown_hit_is_refused(client, published_tasks):
    response = accepted(client, hit=9)
    assert response.status_code == 403 and not Assignment.objects.exists()


def test_an_assignment_id_used_by_another_worker_is_refused(client, published_tasks):
    accepted(client, worker="AW1")
    response = accepted(client, worker="AW2")
    assert response.status_code == 403 and "another worker" in response.content.decode()
    assert Assignment.objects.count() == 1


def test_a_worker_cannot_score_the_same_unit_twice(client, published_tasks):
    submit(client, accepted(client, n=1).content.decode())
    response = accepted(client, n=2)  # returned and accepted the HIT again under a new assignment
    assert response.status_code == 403 and "already scored" in response.content.decode()
    assert Score.objects.count() == 2


def test_reopening_a_submitted_assignment_offers_the_mturk_submit_again(client, published_tasks):
    submit(client, accepted(client).content.decode())
    assert "externalSubmit" in accepted(client).content.decode()


def test_a_forged_unit_token_is_refused(client, published_tasks):
    html = accepted(client).content.decode()
    forged = action(html).replace("/crowd/u/", "/crowd/u/x")
    response = client.post(forged, {f"score-{k}": "2" for k in keys(html)})
    assert response.status_code == 403 and not Score.objects.exists()


def test_a_blocked_worker_cannot_submit(client, published_tasks):
    html = accepted(client).content.decode()
    Annotator.objects.filter(external_id="AW1").update(is_blocked=True)
    assert submit(client, html).status_code == 400 and not Score.objects.exists()


def test_an_allow_list_changed_after_entry_keeps_the_scores_and_says_so(client, published_tasks, settings):
    html = accepted(client).content.decode()
    settings.WELLCHOSEN_CROWD_SUBMIT_HOSTS = ["https://www.mturk.com"]
    response = submit(client, html)
    assert response.status_code == 400 and "Your scores are saved" in response.content.decode()
    assert Score.objects.count() == 2


@pytest.mark.parametrize("field", ["assignmentId", "workerId"])
def test_an_mturk_id_with_a_trailing_newline_is_refused(client, published_tasks, field):
    params = {"assignmentId": assignment_id(1), "hitId": hit_id(1), "workerId": "AW1", "turkSubmitTo": SANDBOX}
    params[field] += "\n"
    response = client.get(reverse("crowd-mturk"), params)
    assert response.status_code == 403 and "malformed" in response.content.decode()
    assert not CrowdAssignment.objects.exists()
