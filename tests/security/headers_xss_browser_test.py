"""The XSS payload corpus through every import and every page that shows what was imported, in
Chromium (Debian's, driven by Playwright) against a live test server.

Every text field that an import takes gets payloads (headers_xss_payloads.py): dialogue turns and
speakers, ground truths, false candidates, repository utterances, annotator ids of a scores file,
human-rated responses, contexts, references and model names; and, as an admin would type them,
dataset descriptions and error labels, system names and descriptions, annotator display names,
crowd batch names and worker feedback, login usernames. Then the annotator and crowd pages, the
MTurk preview, the dashboard, every admin change list and change form, the test-set, crowd and
evaluation pages and the job pages are loaded, and some pages get the payloads in their URL. On
every page: no dialog, no element or attribute that a payload would make, no rendered template
text and no Content-Security-Policy report (our own scripts run under the policy untouched).
"""

import csv
import json
import re
from urllib.parse import quote, urlencode

import pytest
from django.contrib import admin
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.admin.dataset_tools import dataset_tools
from annotation.models import Annotator, Candidate, Dataset, FilterRules, Repository, Score
from annotation.services.assignment import unit_next
from annotation.services.invitations import membership_ensure
from annotation.services.quality import quality_refresh
from annotation.services.submission import Answer, unit_submit
from core.models import Job
from core.services.jobs import job_execute
from core.text import clean_text
from crowd.models import CrowdAssignment, CrowdTask
from crowd.providers.link import link_token
from crowd.selectors import unit_token
from crowd.services.batches import crowd_batch_create, crowd_batch_publish
from crowd.services.work import crowd_unit_submit, link_unit_next, link_worker_ensure
from evaluation.models import Campaign, System, SystemKind
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services.campaigns import campaign_start
from tests.browser.test_annotator_browser import PASSWORD, SCREENSHOTS, browser  # noqa: F401 (the chromium fixture)
from tests.evaluation.campaign_helpers import campaign_with, rated_generation
from tests.factories import UserFactory
from tests.security.headers_xss_payloads import payloads
from testsets.services.build import testset_build

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db(transaction=True)]

PAYLOADS = payloads()
GROUPS = 7  # payloads per text field: every seventh, so each field of a question holds a different group
QUESTIONS = 7  # question q, field f holds group (q + f) % 7: every field sees every payload
HIT = "3XSSHIT{:023d}"

# What a payload that got through would leave in the page: an element with its marker id, an event
# handler attribute, a javascript: URL where one runs, text a template rendered.
FIND_INJECTED = """() => {
  const found = [];
  for (const el of document.querySelectorAll("*")) {
    if (el.id && el.id.startsWith("xss-")) found.push("element #" + el.id);
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase();
      const value = attr.value.replace(/[\\s\\u0000-\\u001f]/g, "").toLowerCase();
      if (name.startsWith("on")) found.push(el.tagName + " attribute " + name);
      const url = ["href", "src", "action", "formaction", "data", "xlink:href"].includes(name);
      if (url && value.startsWith("javascript:")) found.push(el.tagName + " " + name + "=javascript:");
    }
  }
  if (/xss-tpl-\\d/.test(document.documentElement.outerHTML)) found.push("rendered template text");
  return found;
}"""
# Runs before any page script (Playwright's init script is not subject to the page's policy).
RECORD_VIOLATIONS = """window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});"""


def group(i: int) -> str:
    return " ~ ".join(PAYLOADS[i % GROUPS :: GROUPS])


class Visitor:
    """One browser context (one person); loads pages and records what each one did."""

    def __init__(self, chromium, base: str, *, who: str) -> None:
        self.base, self.who = base, who
        self.context = chromium.new_context(viewport={"width": 1280, "height": 900})
        self.context.add_init_script(RECORD_VIOLATIONS)
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.pages = 0
        self.seen_text = ""
        self.page.on("dialog", self._dialog)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"{self.who} {self.page.url}: error {error}"))

    def _dialog(self, dialog) -> None:
        self.problems.append(f"{self.who} {self.page.url}: dialog {dialog.message!r}")
        dialog.dismiss()

    def _console(self, message) -> None:
        if "Content Security Policy" in message.text or "Refused to" in message.text:
            self.problems.append(f"{self.who} {self.page.url}: console {message.text}")

    def left_text(self) -> str:
        """What annotate.js wrote under the responses ("n responses left"; nothing if it did not run)."""
        return self.page.evaluate("document.getElementById('left')?.textContent || ''")

    def visit(self, path: str) -> None:
        response = self.page.goto(self.base + path, wait_until="load")
        self.pages += 1
        if response is not None and response.status >= 500:
            self.problems.append(f"{self.who} {path}: HTTP {response.status}")
        self.page.wait_for_timeout(50)  # autofocus, animation and toggle handlers fire after load
        url = self.page.url
        self.problems += [f"{self.who} {url}: {found}" for found in self.page.evaluate(FIND_INJECTED)]
        self.problems += [f"{self.who} {url}: CSP {v}" for v in self.page.evaluate("window.__cspViolations || []")]
        self.seen_text += self.page.evaluate("document.body ? document.body.innerText : ''")


# --------------------------------------------------------------------------- the imports


def write_testset(folder, name: str, *, with_scores: bool) -> list[str]:
    """A test set in Sato et al.'s TSV (3 context turns, ground truth, 3 false candidates)."""
    lines = ["\t".join(group(q + field) for field in range(7)) for q in range(QUESTIONS)]
    (folder / f"{name}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = [str(folder / f"{name}.tsv"), "--dataset", name]
    if with_scores:
        scores = [json.dumps([[5] * 5] + [[1] * 5] * 3) for _ in range(QUESTIONS)]
        (folder / f"{name}.jsonl").write_text("\n".join(scores) + "\n", encoding="utf-8")
        args += ["--scores", str(folder / f"{name}.jsonl")]
    return args


def import_everything(folder) -> None:
    """Every import, through its command (a recorded job, as from the admin's upload forms)."""
    dialogues = [
        {
            "context": [group(q + t) for t in range(3)],
            "response": group(q + 3),
            "speakers": [PAYLOADS[(3 * q + t) % len(PAYLOADS)] for t in range(3)],
        }
        for q in range(QUESTIONS)
    ]
    (folder / "dialogues.jsonl").write_text("\n".join(json.dumps(d) for d in dialogues) + "\n", encoding="utf-8")
    call_command("import_dialogues", str(folder / "dialogues.jsonl"), "--format", "jsonl", "--dataset", "xss-dialogues")
    call_command("import_testset", *write_testset(folder, "xss-testset", with_scores=True))
    call_command("import_testset", *write_testset(folder, "xss-units", with_scores=False))
    (folder / "utterances.txt").write_text("\n".join(PAYLOADS + [group(i) for i in range(GROUPS)]) + "\n", "utf-8")
    call_command("import_repository", str(folder / "utterances.txt"), "--name", "xss-repo")

    # a scores file whose annotator ids are payloads (crowd and imported workers)
    ground_truths = Candidate.objects.filter(question__dataset__name="xss-testset", is_ground_truth=True)
    with (folder / "scores.csv").open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["question_id", "candidate_id", "annotator", "score"])
        for i, candidate in enumerate(ground_truths):
            for label in (f"mturk:{PAYLOADS[i]}", PAYLOADS[-1 - i]):
                writer.writerow([candidate.question_id, candidate.pk, label, 4])
    call_command("import_scores", str(folder / "scores.csv"))
    # and one that fails on a payload: the job's error is shown on the job pages
    with (folder / "bad-scores.csv").open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows([["question_id", "candidate_id", "annotator", "score"], [1, 1, "a", group(0)]])
    with pytest.raises(CommandError):
        call_command("import_scores", str(folder / "bad-scores.csv"))

    # human ratings of generated responses (Zhao et al.'s format): model, context, response, reference
    zhao = [
        {
            "dialogue_id": f"xss-{i:03d}",
            "model": PAYLOADS[i % len(PAYLOADS)],
            "context": "\n".join(group(i + t) for t in range(2)),
            "response": group(i + 2),
            "reference": [group(i + 3)],
            "annotations": {"appropriateness": [4, 3, 5, 4]},
        }
        for i in range(4)
    ]
    (folder / "zhao.json").write_text(json.dumps(zhao), encoding="utf-8")
    call_command("import_human_ratings", str(folder / "zhao.json"), "--format", "zhao", "--campaign", "xss-zhao")


def edit_as_an_admin_would() -> None:
    """Free-text fields that researchers type in the admin."""
    for i, dataset in enumerate(Dataset.objects.all()):
        Dataset.objects.filter(pk=dataset.pk).update(
            description=group(i), error_labels=PAYLOADS[i : i + 3], adaptive_stopping=False, attention_check_rate=0
        )
    Dataset.objects.filter(name="xss-units").update(annotators_per_item=2)
    Score.objects.filter(candidate__question__dataset__name="xss-testset", candidate__is_ground_truth=False).update(
        labels=PAYLOADS[:2]
    )
    for i, annotator in enumerate(Annotator.objects.order_by("pk")):
        Annotator.objects.filter(pk=annotator.pk).update(display_name=PAYLOADS[(i * 3) % len(PAYLOADS)])


def run_a_campaign() -> Campaign:
    """Plugin systems named and described with payloads, rated, and a campaign report over them."""
    FilterRules.objects.get_or_create(version=1, defaults={"note": group(0)[:255]})
    testset = testset_build(dataset_name="xss-testset", name="xss-release", seed=0)
    keys = [f"q{question_id}" for question_id in testset.items.values_list("question_id", flat=True)]
    systems, generations = [], []
    for i, plugin in enumerate(("ShortestWinsPlugin", "LongestWinsPlugin")):
        system = System.objects.create(
            name=PAYLOADS[i][:100],
            kind=SystemKind.PLUGIN,
            plugin=f"tests.evaluation.plugins.{plugin}",
            description=group(i),
        )
        systems.append(system)
        generations.append(rated_generation(system, [(4 - i, 5 - i)] * len(keys), dataset=testset.dataset, keys=keys))
    campaign = campaign_with(
        name="xss-campaign",
        systems=systems,
        generations=generations,
        testset=testset,
        repository=Repository.objects.get(name="xss-repo"),
        random_trials=4,
        bootstrap_resamples=20,
        description=group(3),
    )
    job_execute(job_id=campaign_start(campaign=campaign, enqueue=False).pk)
    campaign.refresh_from_db()
    assert campaign.report, Job.objects.latest("pk").error
    return campaign


def crowd_batches() -> tuple:
    """A published link batch over the units (its name a payload) and an MTurk batch with one
    published HIT per unit (for the MTurk preview)."""
    units = Dataset.objects.get(name="xss-units")
    link = crowd_batch_create(dataset=units, provider="link", name=group(0)[:100], settings={"units_per_worker": 7})
    crowd_batch_publish(batch=link)
    mturk = crowd_batch_create(dataset=units, provider="mturk", name=group(1)[:100])
    mturk.status = "published"
    mturk.save()
    hits = []
    for n, question_id in enumerate(units.questions.order_by("pk").values_list("pk", flat=True)):
        hits.append(HIT.format(n))
        CrowdTask.objects.create(
            batch=mturk,
            question_id=question_id,
            provider="mturk",
            max_assignments=2,
            external_id=hits[-1],
            status="published",
        )
    return link, hits


@pytest.fixture
def world(live_server, settings, tmp_path):
    settings.WELLCHOSEN_PUBLIC_URL = live_server.url
    import_everything(tmp_path)
    edit_as_an_admin_would()
    run_a_campaign()
    link, hits = crowd_batches()
    UserFactory(username="boss", password=PASSWORD, is_staff=True, is_superuser=True)
    annotator = membership_ensure(user=UserFactory(username="ann", password=PASSWORD), dataset=link.dataset)
    Annotator.objects.filter(pk=annotator.pk).update(display_name=group(5)[:255])
    # failed logins with payloads for usernames (shown in the admin's access attempts)
    for i in range(2):
        Client(REMOTE_ADDR=f"192.0.2.{i + 1}").post("/accounts/login/", {"username": group(i), "password": "x"})
    yield live_server.url, link, hits
    scorer_cache_clear()


def admin_pages() -> list[str]:
    """Every registered model's change list and the change forms of its newest two rows, and the
    admin's own pages for datasets, test sets and crowd batches."""
    pages = ["/admin/"]
    for model in admin.site._registry:
        meta = model._meta
        pages.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        for pk in model.objects.order_by("-pk").values_list("pk", flat=True)[:2]:
            pages.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[pk]))
    for dataset in Dataset.objects.filter(name__startswith="xss-"):
        for name in ("preview", "build", *(tool.slug for tool in dataset_tools())):
            pages.append(reverse(f"admin:annotation_dataset_{name}", args=[dataset.pk]))
    for batch_pk in CrowdAssignment.objects.values_list("batch_id", flat=True).distinct():
        for name in ("plan", "review", "approvals", "notify"):
            pages.append(reverse(f"admin:crowd_crowdbatch_{name}", args=[batch_pk]))
    for ca in CrowdAssignment.objects.all()[:2]:
        pages.append(reverse("admin:crowd_crowdassignment_bonus", args=[ca.pk]))
    pages.append(reverse("admin:evaluation_generation_rate"))
    return pages


def reflected(path: str, *names: str) -> str:
    """``path`` with payloads in each query parameter of ``names`` (a group each)."""
    return f"{path}?{urlencode({name: group(i) for i, name in enumerate(names)})}"


def log_in(visitor: Visitor, path: str, username: str) -> None:
    visitor.page.goto(visitor.base + path)
    visitor.page.fill("input[name=username]", username)
    visitor.page.fill("input[name=password]", PASSWORD)
    with visitor.page.expect_navigation():
        visitor.page.click("[type=submit]")


def annotate_every_unit(visitor: Visitor, dataset: Dataset) -> list[str]:
    """The annotator's unit pages, one per question (each scored through the service after it
    was looked at); what annotate.js wrote on each."""
    annotator = Annotator.objects.get(user__username="ann")
    written = []
    while (assignment := unit_next(annotator=annotator, dataset=dataset)) is not None:
        visitor.visit(f"/annotate/u/{assignment.pk}/")
        written.append(visitor.left_text())
        if len(written) == 1:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            visitor.page.screenshot(path=SCREENSHOTS / "xss-unit.png", full_page=True)
        answers = {item["key"]: Answer(1, dataset.error_labels[:1]) for item in assignment.items}
        unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers)
    visitor.visit("/annotate/")
    visitor.visit("/")
    return written


def work_every_crowd_unit(visitor: Visitor, batch, hits: list[str]) -> list[str]:
    """A link worker's unit pages, the completion page and the MTurk preview of every HIT; what
    annotate.js wrote on each unit page."""
    worker = link_worker_ensure(batch=batch, worker_id="w-1")
    written = []
    while (ca := link_unit_next(batch=batch, worker=worker)) is not None:
        visitor.visit(f"/crowd/u/{unit_token(crowd_assignment=ca)}/")
        written.append(visitor.left_text())
        crowd_unit_submit(crowd_assignment=ca, answers={item["key"]: Answer(2) for item in ca.assignment.items})
    CrowdAssignment.objects.update(feedback=group(4))
    visitor.visit(f"/crowd/l/{link_token(batch=batch)}/?worker=w-1")
    for hit in hits:
        visitor.visit(f"/crowd/mturk/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId={hit}")
    return written


def open_pages_with_payloads_in_the_url(visitor: Visitor, batch) -> None:
    visitor.visit(reflected("/crowd/mturk/", "assignmentId", "hitId", "workerId", "turkSubmitTo"))
    visitor.visit(reflected(f"/crowd/l/{link_token(batch=batch)}/", "worker"))
    visitor.visit(f"/crowd/u/{quote(group(2), safe='')}/")
    visitor.visit(f"/invite/{quote(group(3), safe='')}/")
    visitor.visit(reflected("/accounts/login/", "next"))
    visitor.visit(reflected("/admin/login/", "next"))


def researcher_pages() -> list[str]:
    for dataset in Dataset.objects.filter(name__in=["xss-units", "xss-testset"]):
        quality_refresh(dataset=dataset)
    return [
        "/dashboard/",
        *(f"/dashboard/{name}/" for name in Dataset.objects.values_list("name", flat=True)),
        *(f"/dashboard/{name}/pools/" for name in Dataset.objects.values_list("name", flat=True)),
        "/campaigns/",
        *(f"/campaigns/{name}/" for name in Campaign.objects.values_list("name", flat=True)),
        "/jobs/",
        *(f"/jobs/{pk}/" for pk in Job.objects.values_list("pk", flat=True)),
        *admin_pages(),
        reflected("/admin/annotation/candidate/", "q"),
        reflected("/admin/annotation/dataset/", "q", "o"),
    ]


def test_no_payload_runs_or_injects_markup_on_any_page(browser, world):  # noqa: F811
    base, batch, hits = world
    annotator = Visitor(browser, base, who="annotator")
    log_in(annotator, "/accounts/login/", "ann")
    written = annotate_every_unit(annotator, batch.dataset)
    worker = Visitor(browser, base, who="crowd worker")
    written += work_every_crowd_unit(worker, batch, hits)
    open_pages_with_payloads_in_the_url(worker, batch)
    researcher = Visitor(browser, base, who="researcher")
    log_in(researcher, "/admin/login/", "boss")
    for path in researcher_pages():
        researcher.visit(path)
    visitors = (annotator, worker, researcher)

    # then no page ran a payload, holds its markup or reported a policy violation
    problems = [problem for visitor in visitors for problem in visitor.problems]
    assert not problems, f"{len(problems)} problems, the first ones:\n" + "\n".join(problems[:20])
    # while our own script ran under the policy on every unit page
    assert len(written) == 2 * QUESTIONS and all(re.search(r"left|scored", text) for text in written)
    # and every payload reached a page, shown as the text it is
    shown = " ".join(visitor.seen_text for visitor in visitors)
    assert [p for p in PAYLOADS if clean_text(p) not in shown] == []
    assert sum(visitor.pages for visitor in visitors) >= 150


def test_the_checks_see_a_payload_that_gets_through(browser):  # noqa: F811
    """Without escaping and without the policy, the same checks find what the corpus would do."""
    page = browser.new_context().new_page()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.set_content("<p>" + " ".join(PAYLOADS) + "</p>")
    page.wait_for_timeout(200)
    found = page.evaluate(FIND_INJECTED)
    assert dialogs and any(f.startswith("element #xss-") for f in found) and any("attribute on" in f for f in found)
