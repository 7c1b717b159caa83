"""The issue's "done" criterion in a real browser: a researcher registers two local systems, evaluates
them on a test set, has their responses rated by people, runs a campaign from the admin and reads its
report (leaderboard, correlation table, Figure-2 box plot).

Jobs started from the admin run inside the live server's request: Celery is eager in tests, so the
job page the admin redirects to already shows the finished job. Only the annotators' ratings are
given through the services (the rating page has its own browser test)."""

import pytest

from annotation.models import Candidate, Dataset, DatasetMembership, FilterRules
from annotation.services.assignment import unit_next
from annotation.services.submission import Answer, unit_submit
from core.models import Job, JobStatus
from evaluation.job_params import CampaignParams
from evaluation.models import (
    Campaign,
    Evaluation,
    EvaluationStatus,
    GeneratedResponse,
    Generation,
    System,
)
from evaluation.report import CHOSEN, RANDOM
from evaluation.scoring.loading import scorer_cache_clear
from tests.evaluation.campaign_helpers import build_repository, build_testset
from tests.evaluation.plugins import LongestReplyPlugin
from tests.factories import AnnotatorFactory, UserFactory

from .test_annotator_browser import PASSWORD, SCREENSHOTS, browser, log_in  # noqa: F401  (the chromium fixture)

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]
GPT, PLUGIN = "tiny-gpt2", "longest-reply"
# what each of the two annotators gives each system's responses (and the reference)
RATINGS = {GPT: (2, 1), PLUGIN: (4, 5), None: (5, 5)}


@pytest.fixture
def lab(live_server, scored_question, tiny_gpt2_dir):
    """A test set of 6 questions (dataset "chat"), a repository of 40 utterances for RANDOM, and the
    researcher "rosa" (staff, superuser)."""
    LongestReplyPlugin.reset()
    # the paper's default filter rules: a migration creates them, but the flush after another
    # transactional test (the other browser tests) removes them
    FilterRules.objects.get_or_create(version=1, defaults={"note": "Sato et al. (ACL 2020) §3.1 defaults"})
    testset = build_testset(scored_question, questions=6, name="r1", dataset="chat")
    repository = build_repository(name="films")
    UserFactory(username="rosa", password=PASSWORD, is_staff=True, is_superuser=True)
    yield live_server.url, testset, repository, tiny_gpt2_dir
    scorer_cache_clear()
    LongestReplyPlugin.reset()


def submit(page, selector: str = "input[type=submit]") -> None:
    with page.expect_navigation():
        page.click(selector)


def run_action(page, action: str) -> None:
    """Select every row of the changelist and run ``action``."""
    page.check("#action-toggle")
    page.select_option("select[name=action]", action)
    submit(page, "button[name=index]")


def register_system(page, base: str, name: str, kind: str, **fields: str) -> None:
    page.goto(f"{base}/admin/evaluation/system/add/")
    page.fill("#id_name", name)
    page.select_option("#id_kind", kind)
    for field, value in fields.items():
        page.fill(f"#id_{field}", value)
    submit(page, "input[name=_save]")
    assert "was added successfully" in page.inner_text(".messagelist")


def start_job_from_form(page, url: str, selects: dict[str, str], fills: dict[str, str] | None = None) -> None:
    """Fill one of the admin's "start a job" forms and submit it; the job page must say it succeeded."""
    page.goto(url)
    for field, value in selects.items():
        page.select_option(f"#id_{field}", value)
    for field, value in (fills or {}).items():
        page.fill(f"#id_{field}", value)
    submit(page)
    assert page.inner_text("#job-status") == JobStatus.SUCCEEDED, page.inner_text("#job-error")


def rate_everything(dataset: Dataset) -> None:
    """Two annotators rate every unit of the rating dataset, each response by its system (RATINGS)."""
    system_of = dict(
        GeneratedResponse.objects.filter(generation__campaigns__isnull=True, candidate__isnull=False)
        .values_list("candidate_id", "generation__system__name")
        .distinct()
    )
    for position, annotator in enumerate(AnnotatorFactory.create_batch(2)):
        DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
        while (assignment := unit_next(annotator=annotator, dataset=dataset)) is not None:
            answers = {
                item["key"]: Answer(RATINGS[system_of.get(item["candidate_id"])][position]) for item in assignment.items
            }
            unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers)


def column(page, section: str, header: str) -> list[str]:
    """The cells of one column of a report table, by its header."""
    headers = [h.strip() for h in page.locator(f"{section} thead th").all_inner_texts()]
    index = headers.index(header)
    return [cells[index].strip() for cells in rows(page, section)]


def rows(page, section: str) -> list[list[str]]:
    return [row.locator("td").all_inner_texts() for row in page.locator(f"{section} tbody tr").all()]


def test_a_researcher_ranks_two_local_systems_and_reads_the_campaign_report(browser, lab):  # noqa: F811
    base, testset, repository, gpt2_dir = lab
    page = log_in(browser, base, "rosa", viewport={"width": 1280, "height": 1000})

    # when the researcher registers two local systems in the System admin
    register_system(page, base, GPT, "causal", checkpoint=str(gpt2_dir))
    register_system(page, base, PLUGIN, "plugin", plugin=f"{LongestReplyPlugin.__module__}.LongestReplyPlugin")
    systems = dict(System.objects.values_list("name", "pk"))
    assert set(systems) == {GPT, PLUGIN}

    # and evaluates each on the test set from the Evaluation admin
    for name in (GPT, PLUGIN):
        start_job_from_form(
            page,
            f"{base}/admin/evaluation/evaluation/add/",
            {"testset": str(testset.pk), "system": str(systems[name])},
        )
    # then the Evaluation admin lists both as succeeded, with the accuracy of each
    accuracy = dict(Evaluation.objects.values_list("system__name", "summary__accuracy"))
    page.goto(f"{base}/admin/evaluation/evaluation/")
    listed = {
        page.locator("#result_list tbody tr").nth(i).locator(".field-system").inner_text(): (
            page.locator("#result_list tbody tr").nth(i).locator(".field-status").inner_text(),
            page.locator("#result_list tbody tr").nth(i).locator(".field-accuracy").inner_text(),
        )
        for i in range(page.locator("#result_list tbody tr").count())
    }
    assert listed == {name: (EvaluationStatus.SUCCEEDED, f"{accuracy[name]:.3f}") for name in (GPT, PLUGIN)}

    # when both systems answer the test set's dataset (greedy) from the Generation admin
    for name in (GPT, PLUGIN):
        start_job_from_form(
            page,
            f"{base}/admin/evaluation/generation/add/",
            {"system": str(systems[name]), "dataset": str(testset.dataset_id), "strategy": "greedy"},
            {"max_new_tokens": "12"},
        )
    assert set(Generation.objects.values_list("status", flat=True)) == {EvaluationStatus.SUCCEEDED}
    # and sends their responses to annotators with the "Collect human ratings" action
    page.goto(f"{base}/admin/evaluation/generation/")
    run_action(page, "collect_ratings")
    assert page.locator("#id_generations option:checked").count() == 2
    page.fill("#id_name", "chat-ratings")
    page.fill("#id_annotators_per_item", "2")
    submit(page)
    assert "Rating dataset chat-ratings is open" in page.content()
    rating = Dataset.objects.get(name="chat-ratings")
    assert rating.questions.count() == testset.items.count()
    Dataset.objects.filter(pk=rating.pk).update(attention_check_rate=0)
    # and two annotators rate every unit
    rate_everything(rating)
    assert Candidate.objects.filter(question__dataset=rating, scores__isnull=False).distinct().count() == 3 * 6

    # when the researcher creates the campaign in its admin and runs it with the admin action
    page.goto(f"{base}/admin/evaluation/campaign/add/")
    page.fill("#id_name", "two-systems")
    page.select_option("#id_testset", str(testset.pk))
    page.click("#id_systems_add_all")
    page.click("#id_generations_add_all")
    page.select_option("#id_repository", str(repository.pk))
    page.fill("#id_random_trials", "5")
    page.fill("#id_bootstrap_resamples", "100")
    submit(page, "input[name=_save]")
    assert "was added successfully" in page.inner_text(".messagelist")
    campaign = Campaign.objects.get(name="two-systems")
    assert campaign.systems.count() == 2 and campaign.generations.count() == 2
    run_action(page, "run_campaigns")
    assert "Campaign job(s) started" in page.inner_text(".messagelist")
    job = Job.objects.get(kind=CampaignParams.kind)
    assert job.status == JobStatus.SUCCEEDED, job.error

    # then the report page lists both systems with their CHOSEN accuracy and RANDOM trials
    page.goto(f"{base}/campaigns/two-systems/")
    board = dict(zip(column(page, "#leaderboard", "System"), column(page, "#leaderboard", "Human"), strict=True))
    human = {name: sum(RATINGS[name]) / 2 for name in (GPT, PLUGIN)}
    assert board == {name: f"{value:.3f}" for name, value in human.items()}
    shown_accuracy = column(page, "#leaderboard", "CHOSEN accuracy [95 % CI]")
    assert [cell.split()[0] for cell in shown_accuracy] == [f"{accuracy[n]:.3f}" for n in (PLUGIN, GPT)]
    assert all(cell.endswith("(5)") for cell in column(page, "#leaderboard", "RANDOM mean [min, max]"))
    # and the correlation table has the CHOSEN and RANDOM rows: with two systems every correlation is
    # +1 (the humans' order) or -1, which a note explains
    table = {cells[0]: cells[1:] for cells in rows(page, "#correlations")}
    assert CHOSEN in table and RANDOM in table
    same_order = (accuracy[PLUGIN] - accuracy[GPT]) * (human[PLUGIN] - human[GPT])
    expected = "–" if same_order == 0 else ("1.000" if same_order > 0 else "-1.000")
    assert [cell.split()[0] for cell in table[CHOSEN]] == [expected, expected]
    for cell in table[RANDOM]:
        low, high = cell.split("range [")[1].split("]")[0].split(", ")
        assert {low, high} <= {"1.000", "-1.000"}
    assert "each correlation is +1" in page.inner_text("#notes")
    # and the Figure-2 box plot is drawn
    assert page.locator("#box-plot .chart svg").count() == 1
    page.screenshot(path=SCREENSHOTS / "campaign-report.png", full_page=True)


def test_a_campaign_created_and_run_from_the_workspace_shows_its_report_json(browser, lab):  # noqa: F811
    # given a release and two registered systems (RATINGS-free: the leaderboard's human column is empty)
    from core.readable import number

    base, testset, repository, _ = lab
    System.objects.create(name="short", kind="plugin", plugin="tests.evaluation.plugins.ShortestWinsPlugin")
    System.objects.create(name=PLUGIN, kind="plugin", plugin=f"{LongestReplyPlugin.__module__}.LongestReplyPlugin")
    page = log_in(browser, base, "rosa", viewport={"width": 1280, "height": 1000})

    # when the researcher starts a campaign from the dataset's workspace
    page.goto(f"{base}/dashboard/{testset.dataset.name}/")
    with page.expect_navigation():
        page.click("#step-campaigns a:text('Start a campaign')")
    page.fill("#id_name", "from-workspace")
    for checkbox in page.locator("#id_systems input[type=checkbox]").all():
        checkbox.check()
    page.select_option("#id_repository", str(repository.pk))
    page.fill("#id_random_trials", "4")
    page.screenshot(path=SCREENSHOTS / "campaign-new.png", full_page=True)
    with page.expect_navigation():
        page.click("#campaign-start")

    # then its job ran and its report page shows the leaderboard of report.json, cell by cell
    job = Job.objects.get(kind=CampaignParams.kind)
    assert job.status == JobStatus.SUCCEEDED and job.created_by.username == "rosa", job.error
    assert page.url.endswith("/campaigns/from-workspace/")
    report = page.request.get(f"{base}/campaigns/from-workspace/report.json").json()
    board = {row["system"]: row for row in report["leaderboard"]}
    assert set(board) == {"short", PLUGIN}
    shown = {cells[0].split()[0]: cells for cells in rows(page, "#leaderboard")}
    headers = [h.strip() for h in page.locator("#leaderboard thead th").all_inner_texts()]
    assert headers == ["System", "Human", "Rated", "CHOSEN accuracy [95 % CI]", "RANDOM mean [min, max]"]
    for name, row in board.items():
        random = row["random"]
        assert shown[name] == [
            name,
            number(row["human"]),
            str(row["rated_responses"]),
            f"{number(row['accuracy'])} [{number(row['ci_low'])}, {number(row['ci_high'])}]",
            f"{number(random['mean'])} [{number(random['min'])}, {number(random['max'])}] ({random['trials']})",
        ]
    page.screenshot(path=SCREENSHOTS / "campaign-from-workspace.png", full_page=True)
    # and the workspace lists the campaign with its report
    page.goto(f"{base}/dashboard/{testset.dataset.name}/")
    assert "from-workspace" in page.inner_text("#step-campaigns")
