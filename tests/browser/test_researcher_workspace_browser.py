"""The dataset workspace in a real browser: a researcher takes an empty dataset to a release, its
export and an evaluation by following the workspace alone. Every page is reached by clicking a
link or button of the page before (the admin forms the workspace links to included); no address
is typed but the first.

Jobs started from the admin run inside the live server's request (Celery is eager in tests), so
the job page the admin redirects to shows the finished job. The scores come from the score import
the workspace offers, as from annotators working elsewhere."""

import pytest

from annotation.models import Candidate, FilterRules
from annotation.services.demo import DEMO_DIR
from core.models import JobStatus
from evaluation.models import Evaluation, EvaluationStatus
from evaluation.services.demo import DEMO_SYSTEM, demo_baseline_system
from retrieval.services.demo import DEMO_REPOSITORY, DEMO_REPOSITORY_FILE
from retrieval.services.repository_import import repository_import
from tests.factories import DatasetFactory, UserFactory
from testsets.models import TestSet

from .test_annotator_browser import PASSWORD, SCREENSHOTS, browser, log_in  # noqa: F401  (the chromium fixture)

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]
RATERS = 5


@pytest.fixture
def lab(live_server):
    """An empty dataset "ws", the demo subtitle repository, the TF-IDF baseline system (as the demo
    registers it) and the researcher "rosa"."""
    # the paper's default filter rules: a migration creates them, but another transactional test's flush removes them
    FilterRules.objects.get_or_create(version=1, defaults={"note": "Sato et al. (ACL 2020) §3.1 defaults"})
    DatasetFactory(name="ws", attention_check_rate=0)
    repository_import(path=DEMO_REPOSITORY_FILE, name=DEMO_REPOSITORY, exclude_datasets=["ws"])
    demo_baseline_system(False)
    UserFactory(username="rosa", password=PASSWORD, is_staff=True, is_superuser=True)
    return live_server.url


def click(page, selector: str) -> None:
    with page.expect_navigation():
        page.click(selector)


def to_workspace(page) -> None:
    """From any page of the site: home, then the dataset's row."""
    click(page, "a.brand")
    click(page, "#datasets a:text-is('ws')")


def job_succeeded(page) -> None:
    assert page.inner_text("#job-status") == JobStatus.SUCCEEDED, page.inner_text("body")


def status(page, step: str) -> str:
    return page.inner_text(f"#step-{step} .step-status").lower()  # shown in capitals


def test_a_researcher_takes_an_empty_dataset_to_a_release_from_its_workspace(browser, lab, tmp_path):  # noqa: F811
    base = lab
    page = log_in(browser, base, "rosa", viewport={"width": 1280, "height": 1000})

    # given an empty dataset, its workspace (reached from the home page) says to import dialogues
    click(page, "#datasets a:text-is('ws')")
    assert status(page, "import") == "next" and "No dialogues yet" in page.inner_text("#step-import")
    assert status(page, "open") == "waiting" and page.locator("#step-open button").count() == 0
    page.screenshot(path=SCREENSHOTS / "workspace-empty.png", full_page=True)

    # when the researcher imports the demo dialogues from the import step
    click(page, "#step-import a:text('Import dialogues')")
    assert page.input_value("#id_dataset") == "ws"
    page.set_input_files("#id_file", str(DEMO_DIR / "dialogues.jsonl"))
    page.select_option("#id_format", "jsonl")
    click(page, "input[type=submit]")
    job_succeeded(page)
    to_workspace(page)
    assert status(page, "import") == "done" and "40 questions from 40 dialogues." in page.inner_text("#step-import")
    assert status(page, "pools") == "next"

    # and builds candidate pools from the pools step
    click(page, "#step-pools a:text('Build candidate pools')")
    page.select_option("#id_repository", DEMO_REPOSITORY)
    click(page, "input[type=submit]")
    job_succeeded(page)
    to_workspace(page)
    assert status(page, "pools") == "done" and f"pools from {DEMO_REPOSITORY}" in page.inner_text("#step-pools")
    assert page.inner_text("#step-open button") == "Open 40 questions for annotation"
    page.screenshot(path=SCREENSHOTS / "workspace-pools.png", full_page=True)

    # and imports the scores that annotators gave elsewhere, from the annotation step
    rows = ["question_id,candidate_id,annotator,score"] + [
        f"{question_id},{candidate_id},rater-{r},{5 if is_ground_truth else 1}"
        for question_id, candidate_id, is_ground_truth in Candidate.objects.filter(
            question__dataset__name="ws"
        ).values_list("question_id", "id", "is_ground_truth")
        for r in range(RATERS)
    ]
    scores = tmp_path / "scores.csv"
    scores.write_text("\n".join(rows) + "\n")
    click(page, "#step-annotated a:text('Import scores')")
    page.set_input_files("#id_file", str(scores))
    click(page, "input[type=submit]")
    job_succeeded(page)

    # then opens the questions for annotation: every unit is decided already
    to_workspace(page)
    click(page, "#step-open button")
    assert "40 units open for annotation." in page.inner_text(".messages")
    assert status(page, "open") == "done" and page.locator("#step-open button").count() == 0
    assert "Nothing to open" in page.inner_text("#step-open")
    assert status(page, "annotated") == "done"
    assert status(page, "preview") == "next" and "Not computed yet" in page.inner_text("#step-preview")

    # and refreshes the filter preview: the release is next
    click(page, "#step-preview button:text('Refresh the preview')")
    assert status(page, "preview") == "done"
    assert "A test set built now would have 40 questions." in page.inner_text("#step-preview")
    assert status(page, "releases") == "next"
    page.screenshot(path=SCREENSHOTS / "workspace-midway.png", full_page=True)

    # when the researcher builds the release from the releases step
    click(page, "#step-releases a:text('Build a test set (release)')")
    page.fill("#id_name", "ws-v1")
    click(page, "input[type=submit]")
    job_succeeded(page)

    # then the workspace lists the release, and evaluating a system on it comes next
    to_workspace(page)
    assert status(page, "releases") == "done" and "ws-v1" in page.inner_text("#releases")
    assert TestSet.objects.get(name="ws-v1").manifest["counts"]["questions"] == 40
    assert status(page, "evaluations") == "next"
    jobs = page.inner_text("#jobs")
    assert all(kind in jobs for kind in ("import dialogues", "build candidate pools", "build test set"))
    page.screenshot(path=SCREENSHOTS / "workspace-release.png", full_page=True)
    click(page, "#step-evaluations a:text('Evaluate a system')")
    assert page.input_value("#id_testset") == str(TestSet.objects.get(name="ws-v1").pk)
    # when the researcher picks the TF-IDF baseline and starts the evaluation
    page.select_option("#id_system", label=DEMO_SYSTEM)
    click(page, "input[type=submit]")
    # then it runs, and the workspace's evaluations step shows its accuracy with three decimals
    evaluation = Evaluation.objects.get()
    assert evaluation.status == EvaluationStatus.SUCCEEDED
    to_workspace(page)
    assert status(page, "evaluations") == "done"
    accuracy = page.inner_text("#evaluations")
    assert DEMO_SYSTEM in accuracy and f"{evaluation.summary['accuracy']:.3f}" in accuracy

    # and the release's page, reached from the releases step, downloads its TSV
    click(page, "#releases a:text('ws-v1')")
    with page.expect_download() as download:
        page.click("a:text('ws-v1.tsv')")
    tsv = download.value.path().read_text(encoding="utf-8").splitlines()
    assert len(tsv) == 40 and all(len(line.split("\t")) >= 5 for line in tsv)
