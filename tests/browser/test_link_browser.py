"""The link provider end to end in a real browser (issue 5): the researcher publishes a link batch
in the admin and copies its signed URL; a worker opens it with their id, scores with the keyboard,
submits and sees the completion code; the researcher uploads the platform's approvals CSV in the
admin and the worker's assignments are approved."""

import pytest

from annotation.models import Score
from annotation.services.assignment import annotation_open
from crowd.models import CrowdAssignment
from crowd.services.batches import crowd_batch_create
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory, UserFactory

from .test_annotator_browser import PASSWORD, SCREENSHOTS, browser, log_in  # noqa: F401  (the chromium fixture)

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]
WORKER = "W-0042"


@pytest.fixture
def link_study(live_server, settings):
    """A draft link batch of two units, made by the researcher "boss"."""
    settings.WELLCHOSEN_PUBLIC_URL = live_server.url
    dataset = DatasetFactory(
        name="link-browser", adaptive_stopping=False, attention_check_rate=0, annotators_per_item=2
    )
    for text in ("The train leaves at six.", "I'd rather take the bus, honestly."):
        CandidateFactory(question=QuestionFactory(dataset=dataset), text=text)
    annotation_open(dataset=dataset)
    UserFactory(username="boss", password=PASSWORD, is_staff=True, is_superuser=True)
    batch = crowd_batch_create(dataset=dataset, provider="link", name="pilot", settings={"units_per_worker": 2})
    return live_server.url, batch


def test_a_link_batch_runs_end_to_end_in_the_browser(browser, link_study):  # noqa: F811
    base, batch = link_study
    # the researcher publishes the batch from its plan page and reads the worker link there
    boss = log_in(browser, base, "boss")
    boss.goto(f"{base}/admin/crowd/crowdbatch/{batch.pk}/plan/")
    with boss.expect_navigation():
        boss.click("input[type=submit][value=Publish]")
    boss.goto(f"{base}/admin/crowd/crowdbatch/{batch.pk}/plan/")
    link = boss.input_value("#link-url")
    batch.refresh_from_db()
    assert batch.status == "published" and link.startswith(f"{base}/crowd/l/")
    boss.screenshot(path=SCREENSHOTS / "link-plan.png", full_page=True)

    # a worker (no account, a fresh browser) opens the link with their id and scores two units
    worker = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    worker.goto(f"{link}?worker={WORKER}")
    worker.screenshot(path=SCREENSHOTS / "link-unit.png", full_page=True)
    for unit in range(2):
        assert worker.inner_text("#unit-progress") == f"Unit {unit + 1} of 2"
        assert worker.locator("#unit-form .response").count() == 2
        for digit in ("4", "1"):
            worker.keyboard.press(digit)
        with worker.expect_navigation():
            worker.keyboard.press("Enter")
    code = worker.inner_text("#completion-code")
    worker.screenshot(path=SCREENSHOTS / "link-done.png", full_page=True)
    assert code == batch.completion_code

    # the scores are ours, from the link worker, each tied to its crowd assignment
    scores = Score.objects.select_related("annotator")
    assert sorted(s.value for s in scores) == [1, 1, 4, 4]
    assert {(s.annotator.provider, s.annotator.external_id) for s in scores} == {("link", WORKER)}
    refs = set(CrowdAssignment.objects.filter(batch=batch).values_list("external_id", flat=True))
    assert len(refs) == 2 and {s.assignment_ref for s in scores} == refs

    # the researcher uploads the platform's approvals CSV on the batch's approvals page
    boss.goto(f"{base}/admin/crowd/crowdbatch/{batch.pk}/plan/")
    boss.click("text=import approvals CSV")
    boss.set_input_files(
        "input[type=file]",
        files=[
            {
                "name": "approvals.csv",
                "mimeType": "text/csv",
                "buffer": f"worker_id,status\n{WORKER},APPROVED\n".encode(),
            }
        ],
    )
    with boss.expect_navigation():
        boss.click("input[type=submit]")
    assert "Approvals imported: 2 approved, 0 rejected, 0 unchanged." in boss.inner_text(".messagelist")
    boss.screenshot(path=SCREENSHOTS / "link-approvals-imported.png", full_page=True)
    assert set(CrowdAssignment.objects.filter(batch=batch).values_list("status", flat=True)) == {"approved"}
