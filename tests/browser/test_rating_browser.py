"""Rating generated responses 1-5 in a real browser: an annotator rates a unit of a rating dataset
built from two systems' generations with the keyboard alone, and the ratings land in the database
where the human-ratings selector reads them per system."""

import pytest

from annotation.models import Annotator, DatasetMembership, Score
from evaluation.selectors import human_ratings
from evaluation.services.human_ratings import rating_dataset_create
from tests.factories import GeneratedResponseFactory, GenerationFactory, UserFactory

from .test_annotator_browser import PASSWORD, browser, log_in  # noqa: F401  (the chromium fixture)

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]
CONTEXT = ["Have you seen my keys?", "Did you check the kitchen table?"]
REFERENCE = "Yes, they are not there either."


@pytest.fixture
def rating_unit(live_server):
    """One context answered by two systems (the reference is rated too), and an annotator "rita"."""
    generations = []
    for system, text in (("alpha", "I love the kitchen table."), ("beta", "Not yet, I will look there now.")):
        generation = GenerationFactory(system__name=system)
        GeneratedResponseFactory(
            generation=generation, context_key="keys-1", context=CONTEXT, references=[REFERENCE], text=text
        )
        generations.append(generation)
    dataset = rating_dataset_create(name="rate-browser", generation_ids=[g.pk for g in generations])
    dataset.attention_check_rate = 0
    dataset.save()
    user = UserFactory(username="rita", password=PASSWORD)
    annotator = Annotator.objects.create(user=user, provider="internal", external_id="rita")
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    return live_server.url, generations, annotator


def test_an_annotator_rates_a_unit_with_the_keyboard_alone(browser, rating_unit, tmp_path):  # noqa: F811
    base, generations, annotator = rating_unit
    page = log_in(browser, base, "rita")
    page.goto(f"{base}/annotate/")
    assert page.locator(".response").count() == 3
    assert "Rate each response" in page.inner_text(".guidelines")
    # the scale is 1-5: no 0 button, and the 0 key does nothing
    assert page.locator('input[type=radio][value="0"]').count() == 0
    page.keyboard.press("0")
    assert page.inner_text("#left") == "3 responses left"
    assert page.locator("input[type=radio]:checked").count() == 0
    texts = [page.locator(".response-text").nth(i).inner_text() for i in range(3)]
    # each digit rates the highlighted response and moves on; Enter submits
    for digit in ("5", "2", "1"):
        page.keyboard.press(digit)
    assert page.inner_text("#left") == "All scored"
    page.screenshot(path=tmp_path / "rating-unit.png", full_page=True)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "Nothing left to score" in page.content()
    stored = {s.candidate.text: s.value for s in Score.objects.filter(annotator=annotator).select_related("candidate")}
    assert stored == dict(zip(texts, [5, 2, 1], strict=True))
    ratings = human_ratings(generation_ids=[g.pk for g in generations])
    key = f"a{annotator.pk}"
    assert ratings == {
        "alpha": {"keys-1": [(key, float(stored["I love the kitchen table."]))]},
        "beta": {"keys-1": [(key, float(stored["Not yet, I will look there now."]))]},
    }
