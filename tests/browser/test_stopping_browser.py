"""Probabilistic stopping seen in a real browser: a response the model stops gets no more scores,
a spot-checked one does, and the dataset page shows the tolerance."""

import pytest

from annotation.models import Annotator, DatasetMembership
from annotation.services.assignment import annotation_open
from annotation.services.quality import quality_refresh
from tests.annotation.test_adaptive import score_as
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory, UserFactory

from .test_annotator_browser import PASSWORD, SCREENSHOTS, browser, log_in  # noqa: F401  (the chromium fixture)

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]


def clear(text: str) -> int:
    return 5 if text.startswith("Sure") else 1


def scored_twice(name: str, *, spot_check_rate: float, annotator: str):
    """A dataset at a 10 % tolerance whose one question two annotators scored 5 (ground truth) and
    1 (the reply), and a third annotator, ``annotator``, who may work on it."""
    dataset = DatasetFactory(name=name, stopping_tolerance=0.1, spot_check_rate=spot_check_rate, attention_check_rate=0)
    question = QuestionFactory(dataset=dataset)
    CandidateFactory(question=question, text="The train leaves at six.")
    annotation_open(dataset=dataset)
    for _ in range(2):
        score_as(question, clear)
    user = UserFactory(username=annotator, password=PASSWORD)
    person = Annotator.objects.create(user=user, provider="internal", external_id=annotator)
    DatasetMembership.objects.create(annotator=person, dataset=dataset)
    return dataset


def test_a_stopped_response_gets_no_third_score_and_a_spot_checked_one_does(browser, live_server):  # noqa: F811
    base = live_server.url
    early = scored_twice("early", spot_check_rate=0, annotator="carol")
    scored_twice("spot", spot_check_rate=1.0, annotator="dave")
    UserFactory(username="boss", password=PASSWORD, is_staff=True, is_superuser=True)
    # the model is sure enough after 5, 5 and 1, 1: the third annotator finds nothing to score
    carol = log_in(browser, base, "carol")
    carol.goto(f"{base}/annotate/")
    assert "Nothing left to score" in carol.content()
    # the spot-checked question goes on: both responses are shown to the third annotator
    dave = log_in(browser, base, "dave")
    dave.goto(f"{base}/annotate/")
    assert dave.locator(".response").count() == 2
    dave.screenshot(path=SCREENSHOTS / "stopping-spot-check.png", full_page=True)
    # and the dataset page says how early the decisions were made
    quality_refresh(dataset=early)
    boss = log_in(browser, base, "boss")
    boss.goto(f"{base}/dashboard/early/")
    assert boss.inner_text("#stopping-tolerance") == "10.0 %"
    assert "2 of 2 decisions rest on fewer than 5 scores (2 by the model)" in boss.inner_text("#stopping-early")
    boss.screenshot(path=SCREENSHOTS / "stopping-dashboard.png", full_page=True)
