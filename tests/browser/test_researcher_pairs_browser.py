"""The contrastive-pairs workflow in a real browser: a researcher builds a pair set from the dataset
admin, reviews it with the keyboard alone (accept, reject, edit), evaluates two systems on it in a
campaign and reads correctness per pair type in the campaign report."""

import pytest

from annotation.models import Repository, Utterance
from core.models import Job, JobStatus
from core.text import text_hash
from core.wordnet import WORDNET_INSTALL_HINT, wordnet_available
from evaluation.job_params import CampaignParams
from evaluation.metrics.accuracy import MIN_PAIRS_TO_RANK
from evaluation.models import PairEvaluation
from evaluation.scoring.loading import scorer_cache_clear
from pairs.models import Pair, PairSet, Review
from tests.evaluation.plugins import LongestReplyPlugin
from tests.factories import DatasetFactory, QuestionFactory, UserFactory

from .test_annotator_browser import PASSWORD, SCREENSHOTS, browser, log_in  # noqa: F401  (the chromium fixture)
from .test_researcher_campaign_browser import register_system, rows, run_action, submit

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]

DIALOGUES = [
    (
        ["Where were you last night?", "Out with friends.", "Did anyone drive you home?"],
        "She walked me to the station after dinner.",
    ),
    (["Is the concert tonight?", "Yes, at eight.", "Should we eat first?"], "We can meet before the concert."),
    (["Why are you so wet?", "It started to rain.", "Where is your umbrella?"], "I left my umbrella in the car."),
    (["Is your brother coming?", "He said yes.", "Alone?"], "He is coming with his sister."),
    (["It is so loud in here.", "The radio is on.", "I can't think."], "You should turn off the radio."),
    (["How is the new place?", "Much bigger.", "When did that happen?"], "They moved into a new apartment."),
]
REPOSITORY = """The station was crowded this morning. I waited at the station for an hour.
Dinner is ready. We had dinner at the station. My sister lives in the city. Your sister called.
The concert starts at eight. The concert was long. I lost my umbrella. Take an umbrella with you.
The car is in the garage. My car broke down again. The radio is too loud. Turn on the radio.
They need a new apartment. The apartment has two rooms. The museum opens at nine. The museum is closed.
The library is quiet. I met him at the library. The garden is green. We sat in the garden.
The kitchen is small. The kitchen smells of bread. The hotel was cheap. We found a hotel.
The doctor is busy. Call the doctor. The teacher was late. Ask the teacher.""".replace("\n", " ").split(". ")


@pytest.fixture
def lab(live_server, tiny_gpt2_dir):
    if not wordnet_available():
        pytest.skip(f"WordNet is missing: {WORDNET_INSTALL_HINT}")
    LongestReplyPlugin.reset()
    dataset = DatasetFactory(name="chat")
    for turns, ground_truth in DIALOGUES:
        QuestionFactory(dataset=dataset, ground_truth=ground_truth, context__turns=turns)
    repository = Repository.objects.create(name="films")
    Utterance.objects.bulk_create(
        Utterance(repository=repository, text=t, text_hash=text_hash(t), n_tokens=len(t.split()), source_line=i + 1)
        for i, t in enumerate(t.strip(" .") + "." for t in REPOSITORY)
    )
    UserFactory(username="rosa", password=PASSWORD, is_staff=True, is_superuser=True)
    yield live_server.url, dataset, repository, tiny_gpt2_dir
    scorer_cache_clear()
    LongestReplyPlugin.reset()


def key(page, name: str) -> None:
    """Press a review key; the page it submits or follows loads before the next step."""
    with page.expect_navigation():
        page.keyboard.press(name)


def shown_pair(page) -> Pair:
    return Pair.objects.get(pk=int(page.get_attribute("#pair", "data-pair")))


def test_a_researcher_builds_reviews_and_evaluates_contrastive_pairs(browser, lab):  # noqa: F811
    base, dataset, repository, gpt2_dir = lab
    page = log_in(browser, base, "rosa", viewport={"width": 1280, "height": 1000})

    # when the researcher opens "contrastive pairs" on the dataset's row and builds a set of every type
    page.goto(f"{base}/admin/annotation/dataset/")
    page.click("text=contrastive pairs")
    page.fill("#id_name", "okano")
    page.select_option("#id_repository", "films")
    page.screenshot(path=SCREENSHOTS / "pairs-build-form.png", full_page=True)
    submit(page)
    assert page.inner_text("#job-status") == JobStatus.SUCCEEDED, page.inner_text("#job-error")
    pair_set = PairSet.objects.get(name="okano")
    built = pair_set.pairs.count()
    assert set(pair_set.pairs.values_list("type", flat=True)) == {"content", "sentence", "function"}
    assert pair_set.pairs.filter(review=Review.PENDING).count() == built

    # and reviews it from the Pairs page with the keyboard alone
    page.goto(f"{base}/pairs/")
    with page.expect_navigation():
        page.click("#pair-sets a[href$='/okano/review/']")
    first = shown_pair(page)
    assert page.inner_text("#incorrect mark") == first.incorrect[first.incorrect_start : first.incorrect_end]
    page.screenshot(path=SCREENSHOTS / "pairs-review.png", full_page=True)
    key(page, "a")
    second = shown_pair(page)
    assert second.pk != first.pk
    key(page, "r")
    third = shown_pair(page)
    page.keyboard.press("e")  # the edit box takes the focus; the reviewer rewrites the response
    assert page.evaluate("document.activeElement.id") == "edit-incorrect"
    page.keyboard.press("Control+a")
    page.keyboard.type(f"{third.correct.rstrip('.')} yesterday, I think.")
    key(page, "Enter")
    while page.locator("#pair").count():  # the rest are accepted
        key(page, "a")
    assert page.locator("#empty").count() == 1

    # then the decisions are stored, and the page counts them
    statuses = dict(pair_set.pairs.values_list("pk", "review"))
    assert statuses[first.pk] == Review.ACCEPTED and statuses[second.pk] == Review.REJECTED
    edited = Pair.objects.get(pk=third.pk)
    assert edited.incorrect.endswith("yesterday, I think.") and edited.edited and edited.review == Review.ACCEPTED
    assert list(statuses.values()).count(Review.ACCEPTED) == built - 1
    assert page.inner_text("#count-reviewed") == str(built) and page.inner_text("#count-accepted") == str(built - 1)

    # when the researcher registers two systems and runs a campaign on the pair set from the admin
    register_system(page, base, "tiny-gpt2", "causal", checkpoint=str(gpt2_dir))
    register_system(page, base, "longest-reply", "plugin", plugin=f"{LongestReplyPlugin.__module__}.LongestReplyPlugin")
    page.goto(f"{base}/admin/evaluation/campaign/add/")
    page.fill("#id_name", "pairs-campaign")
    page.click("#id_systems_add_all")
    page.select_option("#id_pair_set", str(pair_set.pk))
    submit(page, "input[name=_save]")
    assert "was added successfully" in page.inner_text(".messagelist")
    run_action(page, "run_campaigns")
    job = Job.objects.get(kind=CampaignParams.kind)
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert PairEvaluation.objects.filter(pair_set=pair_set).count() == 2

    # then the report shows each system's correctness per pair type, subtype and criterion
    page.goto(f"{base}/campaigns/pairs-campaign/")
    systems = [h.strip() for h in page.locator("#pair-types thead th").all_inner_texts()][1:]
    assert sorted(systems) == ["longest-reply", "tiny-gpt2"]
    table = {cells[0]: cells[1:] for cells in rows(page, "#pair-types")}
    assert {"all pairs", "content", "sentence", "function", "criterion EL"} <= set(table)
    for name in systems:
        summary = PairEvaluation.objects.get(system__name=name, pair_set=pair_set).summary
        cell = table["all pairs"][systems.index(name)]
        assert cell.split()[0] == f"{summary['accuracy']:.3f}" and f"({built - 1})" in cell
        # fewer pairs than a ranking needs are marked as such beside their n
        assert cell.endswith("too few to rank") == (built - 1 < MIN_PAIRS_TO_RANK)
    page.screenshot(path=SCREENSHOTS / "pairs-campaign-report.png", full_page=True)
