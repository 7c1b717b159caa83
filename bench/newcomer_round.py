"""A newcomer's whole round through the pages of a running `make run`, in a real browser.

Debian's chromium, driven by Playwright, logs in with the demo logins that `make run` printed
(var/demo-credentials.txt) and follows the links of the pages, as a researcher reading only the
README would:

1. imports --dialogues DailyDialog test dialogues into a new dataset (the home page's "New dataset");
2. imports DailyDialog train as an utterance repository, leaving out the new dataset's utterances
   (the workspace's pools step);
3. builds the candidate pools from it, and generates masked-LM negatives with the demo's toy masked
   LM (both from the workspace, at once: they wait for each other only on the `gpu` queue);
4. scores three units as the demo annotator, with the keyboard (/annotate/);
5. builds a release of the demo's annotated dataset (its workspace), downloads its Hugging Face
   folder from the release's page and loads it with `datasets`;
6. builds contrastive pairs from it and accepts twelve on the review page;
7. evaluates the demo's toy causal LM on the release (the evaluations step);
8. creates a campaign of the two demo systems on the release, with the new repository for RANDOM
   trials and the pair set, runs it from the campaign list and reads its report;
9. opens the new dataset's questions for annotation once its pools are there.

Then it counts the stack's jobs by status (the job list's, the 200 newest: the demo's too) and the
tracebacks in the stack's logs (var/log). Target: 0 failed jobs, 0 tracebacks.
Screenshots go to --out.

    make run                                  # in another terminal, until it prints the address
    .venv/bin/python bench/newcomer_round.py [--base http://127.0.0.1:8000] [--dialogues 100]
"""

import argparse
import itertools
import os
import re
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
DAILYDIALOG_TEST = SHARED / "dailydialog" / "test" / "dialogues_test.txt"
DAILYDIALOG_TRAIN = SHARED / "dailydialog" / "train" / "dialogues_train.txt"
CHROMIUM = "/usr/bin/chromium"
JOB_HANG_GUARD_S = 3600  # a pool build of DailyDialog train on two busy cores takes minutes, not an hour
FINISHED = ("succeeded", "failed", "cancelled")


class Round:
    def __init__(self, browser, base: str, credentials: dict[str, str], out: Path):
        self.browser, self.base, self.credentials, self.out = browser, base, credentials, out
        self.steps: list[tuple[str, float, str]] = []

    def log_in(self, user: str):
        page = self.browser.new_context(viewport={"width": 1280, "height": 1000}, accept_downloads=True).new_page()
        page.goto(f"{self.base}/accounts/login/")
        page.fill("input[name=username]", user)
        page.fill("input[name=password]", self.credentials[user])
        with page.expect_navigation():
            page.click("button[type=submit]")
        return page

    def step(self, name: str, started: float, outcome: str) -> None:
        self.steps.append((name, time.monotonic() - started, outcome))
        print(f"{name}: {outcome} ({time.monotonic() - started:.0f} s)", flush=True)

    def job_wait(self, page) -> dict:
        """Follow the job page the form led to, as its own script does (status.json)."""
        job_id = re.search(r"/jobs/(\d+)/", page.url)
        if not job_id:
            raise RuntimeError(f"expected a job page, got {page.url}: {page.inner_text('body')[:500]}")
        deadline = time.monotonic() + JOB_HANG_GUARD_S
        while time.monotonic() < deadline:
            status = page.request.get(f"{self.base}/jobs/{job_id.group(1)}/status.json").json()
            if status["status"] in FINISHED:
                self.settle(page)
                return status
            time.sleep(2)
        raise TimeoutError(f"job #{job_id.group(1)} still running after {JOB_HANG_GUARD_S} s")

    @staticmethod
    def settle(page) -> None:
        """Load the finished job's page; its own script reloads it on finishing too, and whichever
        navigation comes second aborts the first."""
        for attempt in range(5):
            try:
                page.goto(page.url)
                return
            except Exception:  # playwright's Error: net::ERR_ABORTED
                time.sleep(1 + attempt)
        page.goto(page.url)

    def shot(self, page, name: str) -> None:
        page.screenshot(path=str(self.out / f"{name}.png"), full_page=True)


def click(page, selector: str) -> None:
    with page.expect_navigation():
        page.click(selector)


def job_outcome(status: dict) -> str:
    return f"job #{status['id']} {status['status']}: {status.get('summary') or status.get('error', '')[:300]}"


def run_round(r: Round, *, dialogues_file: Path, tag: str) -> None:
    dataset, repository = f"dd-test-{tag}", f"dd-train-{tag}"
    release, pair_set, campaign = f"demo-annotated-{tag}", f"demo-pairs-{tag}", f"round-{tag}"
    page = r.log_in("researcher")

    started = time.monotonic()
    click(page, "a:text('New dataset: import dialogues')")
    page.set_input_files("#id_file", str(dialogues_file))
    page.select_option("#id_format", "dailydialog")
    page.fill("#id_dataset", dataset)
    click(page, "input[type=submit]")
    r.step("import dialogues", started, job_outcome(r.job_wait(page)))

    started = time.monotonic()
    page.goto(f"{r.base}/dashboard/{dataset}/")
    click(page, "a:text('Import an utterance repository')")
    page.set_input_files("#id_file", str(DAILYDIALOG_TRAIN))
    page.fill("#id_name", repository)
    page.select_option("#id_format", "dailydialog")
    page.select_option("#id_exclude_datasets", [dataset])
    click(page, "input[type=submit]")
    r.step("import repository", started, job_outcome(r.job_wait(page)))

    started = time.monotonic()
    page.goto(f"{r.base}/dashboard/{dataset}/")
    click(page, "#step-pools a:text('Build candidate pools')")
    page.select_option("#id_repository", repository)
    page.select_option("#id_exclude_datasets", [dataset])
    click(page, "input[type=submit]")
    pools_page = page
    page = r.log_in("researcher")  # a second tab: the pool job runs on
    page.goto(f"{r.base}/dashboard/{dataset}/")
    click(page, "a:text('Generate negatives')")
    click(page, "input[type=submit]")
    r.shot(page, "round-negatives-queued")
    negatives_page = page
    page = r.log_in("researcher")

    annotate_started = time.monotonic()
    annotator = r.log_in("annotator")
    annotator.goto(f"{r.base}/annotate/")
    for unit in range(3):
        if "/annotate/choose" in annotator.url:
            click(annotator, "button:has-text('demo-dialogues'), a:has-text('demo-dialogues')")
        responses = annotator.locator(".response").count()
        for n in range(responses):
            annotator.keyboard.press("5" if n == 0 else "1")
        if unit == 0:
            r.shot(annotator, "round-unit")
        with annotator.expect_navigation():
            annotator.keyboard.press("Enter")
    r.step("annotate 3 units", annotate_started, annotator.inner_text("body").split("Open")[0].strip()[-40:])

    started = time.monotonic()
    page.goto(f"{r.base}/dashboard/demo-annotated/")
    click(page, "#step-releases a:text('Build a test set (release)')")
    page.fill("#id_name", release)
    click(page, "input[type=submit]")
    r.step("build the release", started, job_outcome(r.job_wait(page)))

    started = time.monotonic()
    page.goto(f"{r.base}/dashboard/demo-annotated/")
    click(page, f"#releases a:text('{release}')")
    r.shot(page, "round-release")
    with page.expect_download() as download:
        page.click(f"a:text('{release}.hf.zip')")
    folder = Path(tempfile.mkdtemp(prefix="round-hf-"))
    zip_path = folder.with_suffix(".zip")
    download.value.save_as(zip_path)
    zipfile.ZipFile(zip_path).extractall(folder)
    import datasets

    loaded = datasets.load_dataset(str(folder))
    r.step(
        "HF folder loaded by datasets",
        started,
        f"{loaded['test'].num_rows} rows, columns {loaded['test'].column_names}",
    )

    started = time.monotonic()
    page.goto(f"{r.base}/dashboard/demo-annotated/")
    click(page, "a:text('Build contrastive pairs')")
    page.fill("#id_name", pair_set)
    page.select_option("#id_repository", repository)
    click(page, "input[type=submit]")
    outcome = job_outcome(r.job_wait(page))
    page.goto(f"{r.base}/pairs/")
    click(page, f"tr:has-text('{pair_set}') a:text('review')")
    for _ in range(12):
        with page.expect_navigation():
            page.keyboard.press("a")
    r.shot(page, "round-pair-review")
    r.step("build pairs and accept 12", started, outcome)

    started = time.monotonic()
    page.goto(f"{r.base}/dashboard/demo-annotated/")
    click(page, "#step-evaluations a:text('Evaluate a system')")
    page.select_option("#id_testset", label=release)
    page.select_option("#id_system", label="demo-tiny-gpt")
    click(page, "input[type=submit]")
    r.step("evaluate demo-tiny-gpt", started, job_outcome(r.job_wait(page)))

    started = time.monotonic()
    page.goto(f"{r.base}/admin/evaluation/campaign/add/")
    page.fill("#id_name", campaign)
    page.select_option("#id_testset", label=release)
    page.click("#id_systems_add_all")
    page.select_option("#id_repository", label=repository)
    page.select_option("#id_pair_set", label=pair_set)
    click(page, "input[name=_save]")
    page.check(f"tr:has-text('{campaign}') input[name=_selected_action]")
    page.select_option("select[name=action]", "run_campaigns")
    click(page, "button[name=index]")
    click(page, ".messagelist a[href*='/jobs/']")
    outcome = job_outcome(r.job_wait(page))
    page.goto(f"{r.base}/campaigns/{campaign}/")
    r.shot(page, "round-campaign")
    r.step("campaign", started, outcome)

    for name, waiting in (("pools", pools_page), ("negatives", negatives_page)):
        started = time.monotonic()
        r.step(name, started, job_outcome(r.job_wait(waiting)))
    started = time.monotonic()
    page.goto(f"{r.base}/dashboard/{dataset}/")
    r.shot(page, "round-workspace")
    click(page, "#step-open button")
    r.step("open for annotation", started, page.inner_text(".messages").strip())


def jobs_by_status(r: Round) -> dict[str, int]:
    """The job list's jobs (the 200 newest) by status."""
    page = r.log_in("researcher")
    counts: dict[str, int] = {}
    page.goto(f"{r.base}/jobs/")
    while True:
        for row in page.locator("table tbody tr").all():
            cells = row.locator("td").all_inner_texts()
            if len(cells) >= 3:
                counts[cells[2].strip()] = counts.get(cells[2].strip(), 0) + 1
        following = page.locator("a:text-is('next')")
        if not following.count():
            return counts
        click(page, "a:text-is('next')")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "var", help="make run's WELLCHOSEN_DATA_DIR")
    parser.add_argument("--dialogues", type=int, default=100)
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "screenshots" / "round")
    options = parser.parse_args()
    for path in (DAILYDIALOG_TEST, DAILYDIALOG_TRAIN):
        if not path.exists():
            sys.exit(f"skipped: {path} is missing (the real DailyDialog; WELLCHOSEN_SHARED_DATA: its folder)")
    from playwright.sync_api import sync_playwright

    credentials = dict(
        line.split(":", 1) for line in (options.data_dir / "demo-credentials.txt").read_text().split() if ":" in line
    )
    logs = sorted((options.data_dir / "log").glob("*.log"))
    tracebacks_before = {log: log.read_text(errors="replace").count("Traceback") for log in logs}
    options.out.mkdir(parents=True, exist_ok=True)
    tag = time.strftime("%m%d%H%M")
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        dialogues_file = Path(folder) / f"dialogues_test_{options.dialogues}.txt"
        with DAILYDIALOG_TEST.open(encoding="utf-8") as source:
            dialogues_file.write_text("".join(itertools.islice(source, options.dialogues)))
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        r = Round(browser, options.base, credentials, options.out)
        started = time.monotonic()
        run_round(r, dialogues_file=dialogues_file, tag=tag)
        took = time.monotonic() - started
        jobs = jobs_by_status(r)
    new_tracebacks = {
        log.name: log.read_text(errors="replace").count("Traceback") - tracebacks_before.get(log, 0) for log in logs
    }
    print(f"\nround {tag} took {took / 60:.1f} min; jobs of the stack by status: {jobs}")
    print(f"tracebacks written to the logs during the round: {sum(new_tracebacks.values())} {new_tracebacks}")
    failed = jobs.get("failed", 0) + sum(new_tracebacks.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
