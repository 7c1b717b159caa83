"""MTurk's ExternalQuestion in a real browser: a stand-in for MTurk's worker site (another
origin) frames our page with the assignment parameters; the worker scores, our page saves the
scores and posts the assignment to the stand-in's /mturk/externalSubmit."""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode

import pytest

from annotation.models import Score
from annotation.services.assignment import annotation_open
from crowd.models import CrowdTask
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory

from .test_annotator_browser import SCREENSHOTS, browser  # noqa: F401  (the chromium fixture)

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]
HIT = "3HIT00000000000000000000000001"


class FakeMTurk:
    """Serves the worker's HIT page (our page in an iframe) and records externalSubmit posts."""

    def __init__(self) -> None:
        self.posts: list[dict] = []
        self.frame_url = ""

    def __enter__(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                body = (
                    "<!doctype html><title>HIT</title>"
                    f'<iframe id="hit" src="{fake.frame_url}" style="width:100%;height:900px"></iframe>'
                )
                self._send(body)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                fake.posts.append({"path": self.path, **parse_qs(self.rfile.read(length).decode())})
                self._send("<p id='done'>HIT submitted</p>")

            def _send(self, body: str):
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.origin = f"http://127.0.0.1:{self.server.server_port}"
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hit(live_server, settings):
    """A published HIT for one unit; the stand-in MTurk is an allowed submit origin."""
    from crowd.services.batches import crowd_batch_create

    dataset = DatasetFactory(
        name="mturk-browser", adaptive_stopping=False, attention_check_rate=0, annotators_per_item=2
    )
    question = QuestionFactory(dataset=dataset)
    CandidateFactory(question=question, text="The train leaves at six.")
    annotation_open(dataset=dataset)
    batch = crowd_batch_create(dataset=dataset, provider="mturk", name="b")
    batch.status = "published"
    batch.save()
    CrowdTask.objects.create(
        batch=batch, question=question, provider="mturk", max_assignments=2, external_id=HIT, status="published"
    )
    with FakeMTurk() as fake:
        settings.WELLCHOSEN_CROWD_SUBMIT_HOSTS = [fake.origin]
        yield live_server.url, fake


def frame_url(base: str, **params) -> str:
    return f"{base}/crowd/mturk/?{urlencode(params)}"


def test_a_worker_previews_accepts_scores_and_submits_through_mturk(browser, hit):  # noqa: F811
    base, fake = hit
    page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
    refused = []  # Content-Security-Policy reports of the framed pages (the auto-submit is a static script)
    page.on("console", lambda message: refused.append(message.text) if "Refused" in message.text else None)
    # preview: the unit is visible, nothing can be scored
    fake.frame_url = frame_url(base, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId=HIT)
    page.goto(f"{fake.origin}/hit")
    frame = page.frame_locator("#hit")
    assert frame.locator(".response").count() == 2
    assert frame.locator("input[type=radio]:enabled").count() == 0
    # accepted: score both responses, submit; our page saves, then posts to externalSubmit
    fake.frame_url = frame_url(
        base, assignmentId="3ASG00000000000000000000000001", hitId=HIT, workerId="AWORKER1", turkSubmitTo=fake.origin
    )
    page.goto(f"{fake.origin}/hit")
    frame = page.frame_locator("#hit")
    assert frame.locator("#submit").is_disabled()  # the page script runs: nothing scored yet
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "mturk-hit.png", full_page=True)
    for i, value in enumerate(("4", "1")):
        frame.locator(".response").nth(i).locator(f"label:has(input[value='{value}'])").click()
    assert frame.locator("#left").inner_text() == "All scored"
    frame.locator("#submit").click()
    frame.locator("#done").wait_for(timeout=10_000)
    deadline = time.monotonic() + 5
    while not fake.posts and time.monotonic() < deadline:
        time.sleep(0.05)
    (post,) = fake.posts
    assert post["path"] == "/mturk/externalSubmit"
    assert post["assignmentId"] == ["3ASG00000000000000000000000001"]
    assert sorted(Score.objects.values_list("value", flat=True)) == [1, 4]
    assert set(Score.objects.values_list("assignment_ref", flat=True)) == {"3ASG00000000000000000000000001"}
    assert refused == []
