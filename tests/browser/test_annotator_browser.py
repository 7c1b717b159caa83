"""The annotator page and the dashboard in a real browser: Debian's chromium driven by Playwright
against a live test server. Screenshots go to var/screenshots/ for a person to look at."""

import os
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from annotation.models import Annotator, Assignment, DatasetMembership, Score
from annotation.services.assignment import annotation_open
from annotation.services.quality import quality_refresh
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory, UserFactory

CHROMIUM = os.environ.get("WELLCHOSEN_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
PASSWORD = "browser-test-pw-1"
XSS = '<script>window.__xss = 1</script><i>leaning</i> <img src=x onerror="window.__img = 1">'

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are plain sync code.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


@pytest.fixture
def world(live_server):
    dataset = DatasetFactory(name="browser", adaptive_stopping=False, attention_check_rate=0, annotators_per_item=2)
    question = QuestionFactory(dataset=dataset)
    CandidateFactory(question=question, text="The train leaves at six.")
    CandidateFactory(question=question, text=XSS)
    annotation_open(dataset=dataset)
    people = {}
    for name in ("alice", "bob"):
        user = UserFactory(username=name, password=PASSWORD)
        people[name] = Annotator.objects.create(user=user, provider="internal", external_id=name)
        DatasetMembership.objects.create(annotator=people[name], dataset=dataset)
    UserFactory(username="boss", password=PASSWORD, is_staff=True, is_superuser=True)
    return live_server.url, dataset, question, people


def log_in(browser, base: str, username: str, *, viewport=None):
    page = browser.new_context(viewport=viewport or {"width": 1280, "height": 900}).new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit]")
    return page


def test_an_annotator_scores_a_unit_with_the_keyboard_alone(browser, world):
    base, _, question, people = world
    page = log_in(browser, base, "alice")
    page.goto(f"{base}/annotate/")
    assert page.locator(".response").count() == 3
    page.screenshot(path=SCREENSHOTS / "unit.png", full_page=True)
    # the first response has the focus; each digit scores and moves on; Enter submits
    texts = [page.locator(".response-text").nth(i).inner_text() for i in range(3)]
    for digit in ("4", "1", "0"):
        page.keyboard.press(digit)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "Nothing left to score" in page.content()
    stored = {
        s.candidate.text: s.value for s in Score.objects.filter(annotator=people["alice"]).select_related("candidate")
    }
    assert stored == dict(zip(texts, [4, 1, 0], strict=True))


def test_enter_does_not_submit_until_every_response_is_scored(browser, world):
    base, *_ = world
    page = log_in(browser, base, "alice")
    page.goto(f"{base}/annotate/")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    assert "2 responses left" in page.inner_text("#left")
    assert not Score.objects.exists()


def test_markup_in_utterances_stays_inert_text(browser, world):
    base, *_ = world
    page = log_in(browser, base, "alice")
    page.goto(f"{base}/annotate/")
    responses = page.locator(".responses")
    assert responses.locator("i").count() == 0 and responses.locator("img").count() == 0
    assert page.get_by_text("<script>window.__xss = 1</script>", exact=False).count() == 1
    assert page.evaluate("window.__xss === undefined && window.__img === undefined")


def test_an_expired_lease_goes_to_someone_else(browser, world):
    base, _, question, people = world
    alice = log_in(browser, base, "alice")
    alice.goto(f"{base}/annotate/")
    unit_url = base + alice.locator("#unit-form").get_attribute("action")  # the unit's own address
    # given a unit that needs one annotator, leased to Alice, whose lease has run out
    dataset = question.dataset
    dataset.annotators_per_item = 1
    dataset.save()
    annotation_open(dataset=dataset)
    Assignment.objects.filter(annotator=people["alice"]).update(leased_until=timezone.now() - timedelta(seconds=5))
    bob = log_in(browser, base, "bob")
    bob.goto(f"{base}/annotate/")
    assert bob.locator(".response").count() == 3  # Bob got the unit Alice let expire
    bob.screenshot(path=SCREENSHOTS / "expired-lease-taken-over.png")
    alice.goto(unit_url)
    assert "no longer yours" in alice.content()


def test_the_researcher_sees_new_scores_on_the_dashboard(browser, world):
    base, dataset, _, _ = world
    page = log_in(browser, base, "alice")
    page.goto(f"{base}/annotate/")
    for _ in range(3):
        page.keyboard.press("2")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    quality_refresh(dataset=dataset)
    boss = log_in(browser, base, "boss")
    boss.goto(f"{base}/dashboard/{dataset.name}/")
    assert boss.inner_text("#scores") == "3"
    assert "internal:alice" in boss.content()
    boss.screenshot(path=SCREENSHOTS / "dashboard.png", full_page=True)


def test_the_unit_fits_a_phone(browser, world):
    base, *_ = world
    page = log_in(browser, base, "alice", viewport={"width": 390, "height": 844})
    page.goto(f"{base}/annotate/")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    page.screenshot(path=SCREENSHOTS / "unit-phone.png", full_page=True)


def test_reasons_for_low_scores_stay_folded_until_asked_for(browser, live_server):
    """A unit of ten responses all scored low stays short: each shows only "add a reason"."""
    dataset = DatasetFactory(name="tall", adaptive_stopping=False, attention_check_rate=0)
    question = QuestionFactory(dataset=dataset)
    for i in range(9):
        CandidateFactory(question=question, text=f"An unrelated reply number {i} about the weather.")
    annotation_open(dataset=dataset)
    user = UserFactory(username="carol", password=PASSWORD)
    carol = Annotator.objects.create(user=user, provider="internal", external_id="carol")
    DatasetMembership.objects.create(annotator=carol, dataset=dataset)
    page = log_in(browser, live_server.url, "carol")
    page.goto(f"{live_server.url}/annotate/")
    unscored = page.evaluate("document.documentElement.scrollHeight")
    for _ in range(10):
        page.keyboard.press("1")
    assert page.locator(".reasons summary:visible").count() == 10
    assert page.locator(".reasons input[type=checkbox]:visible").count() == 0
    height = page.evaluate("document.documentElement.scrollHeight")
    page.screenshot(path=SCREENSHOTS / "unit-low-scores.png", full_page=True)
    assert height - unscored <= 10 * 30, (unscored, height)  # one short line per low score
    # "add a reason" opens one response's reasons; a ticked reason is submitted with its score
    page.locator(".reasons summary").first.click()
    page.locator(".reasons input[type=checkbox]:visible").first.check()
    page.screenshot(path=SCREENSHOTS / "unit-low-scores-reason-open.png", full_page=True)
    with page.expect_navigation():
        page.click("#submit")
    assert Score.objects.filter(annotator=carol).count() == 10
    assert Score.objects.filter(annotator=carol).exclude(labels=[]).count() == 1


def test_an_annotator_of_two_datasets_works_on_the_one_they_choose(browser, world):
    base, dataset, _, people = world
    other = DatasetFactory(name="other", adaptive_stopping=False, attention_check_rate=0)
    CandidateFactory(question=QuestionFactory(dataset=other), text="A reply in the other dataset.")
    annotation_open(dataset=other)
    DatasetMembership.objects.create(annotator=people["alice"], dataset=other)
    page = log_in(browser, base, "alice")
    page.goto(f"{base}/")
    page.check("input[name=dataset][value=other]")
    page.screenshot(path=SCREENSHOTS / "start-choose-dataset.png", full_page=True)
    with page.expect_navigation():
        page.click("#start")
    assert "A reply in the other dataset." in page.content()
    assert Assignment.objects.get(annotator=people["alice"]).question.dataset == other
