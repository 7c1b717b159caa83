"""The pool review page in a real browser: a researcher pages through the questions with the
keyboard alone (J / → next, K / ← previous) and reads each candidate's rank, score and decision."""

import pytest

from retrieval.models import ExclusionReason
from tests.factories import (
    AnnotatorFactory,
    DatasetFactory,
    QuestionFactory,
    RepositoryFactory,
    ScoreFactory,
    UserFactory,
)
from tests.retrieval.test_pool_review import TURNS, excluded, pool, retrieved

from .test_annotator_browser import SCREENSHOTS, browser, log_in  # noqa: F401  (the chromium fixture)

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def lab(live_server):
    dataset = DatasetFactory(name="museum")
    repository = RepositoryFactory(name="films")
    questions = [
        QuestionFactory(dataset=dataset, ground_truth=text, context__turns=TURNS)
        for text in ("It closes at six, so we should hurry.", "The bus is faster than walking.", "Let us go tomorrow.")
    ]
    first = questions[0]
    candidates = [
        retrieved(first, repository, "The museum is closed on Mondays.", rank=1, score=14.2871),
        retrieved(first, repository, "We took the bus to the museum.", rank=3, score=9.50123),
        retrieved(first, repository, "Buses run every ten minutes.", source="dense", rank=1, score=0.61234),
        retrieved(first, repository, "Hurry, the shop closes at six!", source="dense", rank=3, score=0.58111),
    ]
    pool(
        first,
        repository,
        excluded(2, ExclusionReason.PARAPHRASE, similarity=0.9612),
        excluded(2, ExclusionReason.TOO_SHORT, retriever="dense", tokens=2),
    )
    annotators = AnnotatorFactory.create_batch(5)
    responses = [(first.candidates.get(is_ground_truth=True), [5, 5, 4, 5, 5])]
    responses += zip(candidates, ([1, 1, 2, 1, 1], [4, 4, 5, 3, 2], [0, 0, 0, 1, 1], [2, 1, 1, 2, 1]), strict=True)
    for candidate, values in responses:
        for annotator, value in zip(annotators, values, strict=True):
            ScoreFactory(candidate=candidate, annotator=annotator, value=value)
    for question in questions[1:]:
        retrieved(question, repository, f"Another museum line for question {question.pk}.", rank=1, score=7.25)
        pool(question, repository)
    UserFactory(username="rosa", password="browser-test-pw-1", is_staff=True, is_superuser=True)
    return live_server.url, [q.pk for q in questions]


def test_a_researcher_pages_through_the_pools_with_the_keyboard(browser, lab):  # noqa: F811
    base, ids = lab
    page = log_in(browser, base, "rosa")
    problems = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.goto(f"{base}/dashboard/museum/")
    with page.expect_navigation():
        page.click("#step-pools >> text=Review the pools beside their dialogues")
    assert page.locator("#pool").get_attribute("data-question") == str(ids[0])
    page.screenshot(path=SCREENSHOTS / "pool-review.png", full_page=True)
    # the first question: its dialogue, candidates with 3-digit scores, a reason for the missing rank
    text = page.inner_text("body")
    assert "Is the museum open today?" in text and "14.287" in text and "14.2871" not in text
    assert "paraphrase of the ground truth (cosine 0.961)" in text and "too short (2 tokens)" in text
    assert "dropped as acceptable" in text and "dropped as ungrammatical" in text and "ground truth passed" in text
    # J and → go forward, K and ← back
    for key, expected in (("j", 1), ("ArrowRight", 2), ("k", 1), ("ArrowLeft", 0)):
        with page.expect_navigation():
            page.keyboard.press(key)
        assert page.locator("#pool").get_attribute("data-question") == str(ids[expected]), key
    # past the last question nothing happens
    page.goto(f"{base}/dashboard/museum/pools/?q={ids[2]}")
    page.keyboard.press("j")
    assert page.locator("#pool").get_attribute("data-question") == str(ids[2])
    # a filter keeps its value while paging
    page.goto(f"{base}/dashboard/museum/pools/?source=dense")
    assert page.locator("#position").inner_text().endswith("1 of 1")
    assert not problems, problems
