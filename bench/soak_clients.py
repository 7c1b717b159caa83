"""bench/soak.py's clients of the stack, in one event loop: simulated annotators, a researcher who
starts jobs from the admin's pages and follows them as the job page does (status.json), and
command-line imports through ``config.stack manage``. Every request is timed and its status kept."""

import asyncio
import random
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import aiohttp
from benchlib import unit_answers, unit_form

JOB_POLL_S = 2.0  # the job page polls status.json about this often
BROWSE_EVERY_S = 5.0
JOB_HANG_GUARD_S = 3600  # a job still unfinished after this is reported as hung, not waited for
REQUEST_TIMEOUT_S = 600  # a hang guard: a slow answer is measured, not cut off


@dataclass
class Record:
    """What the clients saw: every request's page kind, status (0: no answer) and seconds."""

    started: float = field(default_factory=time.monotonic)
    requests: list[tuple[str, int, float, float]] = field(default_factory=list)  # kind, status, seconds, at
    problems: list[str] = field(default_factory=list)
    acknowledged: dict[int, int] = field(default_factory=dict)  # assignment id -> responses in the form
    jobs: list[tuple[str, int | None, str]] = field(default_factory=list)  # kind, job id, outcome
    commands: list[tuple[str, int, float, str]] = field(default_factory=list)  # command, exit status, seconds, tail
    annotators_done: int = 0  # annotators that ran out of units

    def add(self, kind: str, status: int, seconds: float, note: str = "") -> None:
        self.requests.append((kind, status, seconds, time.monotonic() - self.started))
        if not 200 <= status < 400:
            self.problems.append(
                f"{time.monotonic() - self.started:.0f} s {kind}: {status or 'no answer'} {note}"[:400]
            )

    def by_kind(self) -> dict[str, list[tuple[int, float]]]:
        kinds = defaultdict(list)
        for kind, status, seconds, _ in self.requests:
            kinds[kind].append((status, seconds))
        return kinds


class Browser:
    """One person's session (cookies of its own) against the stack's web server."""

    def __init__(self, base: str, record: Record):
        self.record = record
        self.http = aiohttp.ClientSession(
            base_url=base,
            cookie_jar=aiohttp.CookieJar(unsafe=True),  # cookies for 127.0.0.1 too
            timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S),
        )

    async def request(self, kind: str, method: str, url: str, **options) -> tuple[int, str, dict]:
        start = time.perf_counter()
        try:
            async with self.http.request(method, url, allow_redirects=False, **options) as answer:
                status, text, headers = answer.status, await answer.text(errors="replace"), dict(answer.headers)
        except (aiohttp.ClientError, TimeoutError) as error:
            self.record.add(kind, 0, time.perf_counter() - start, f"{type(error).__name__}: {error}")
            return 0, "", {}
        self.record.add(kind, status, time.perf_counter() - start, _error_note(status, text))
        return status, text, headers

    async def login(self, username: str, password: str) -> None:
        status, page, _ = await self.request("login page", "GET", "/accounts/login/")
        form = forms_read(page).get("username") if status == 200 else None
        if form is None:
            raise RuntimeError(f"no login form for {username} (status {status})")
        data = form.fields | {"username": username, "password": password}
        status, _, _ = await self.request("login", "POST", "/accounts/login/", data=data)
        if status != 302:
            raise RuntimeError(f"{username} could not log in (status {status})")

    async def form_submit(self, page_kind: str, url: str, field: str, values: dict, *, files: dict | None = None):
        """GET the page, fill in its form (the one with ``field``) and POST it: the job it started
        (its id, from the redirect to its page), or None."""
        status, page, _ = await self.request(page_kind, "GET", url)
        form = forms_read(page).get(field) if status == 200 else None
        if form is None:
            return None
        data = aiohttp.FormData()
        for name, value in (form.fields | values).items():
            for one in value if isinstance(value, list) else [value]:
                data.add_field(name, str(one))
        handles = []
        for name, path in (files or {}).items():
            handles.append(open(path, "rb"))  # noqa: SIM115 - closed below, after the upload
            data.add_field(name, handles[-1], filename=Path(path).name)
        try:
            status, page, headers = await self.request(f"{page_kind} (post)", "POST", form.action or url, data=data)
        finally:
            for handle in handles:
                handle.close()
        found = re.search(r"/jobs/(\d+)/", headers.get("Location", "")) if status == 302 else None
        if found is None:
            self.record.problems.append(f"{page_kind}: not started (status {status}) {_error_note(200, page)}"[:400])
            return None
        job_id = int(found.group(1))
        await self.request("job page", "GET", f"/jobs/{job_id}/")
        return job_id

    async def job_wait(self, kind: str, job_id: int | None) -> str:
        """Follow the job as its page does until it finishes; its outcome."""
        if job_id is None:
            self.record.jobs.append((kind, None, "not started"))
            return "not started"
        deadline = time.monotonic() + JOB_HANG_GUARD_S
        outcome = "unfinished (hang guard)"
        while time.monotonic() < deadline:
            await asyncio.sleep(JOB_POLL_S)
            status, text, _ = await self.request("job status.json", "GET", f"/jobs/{job_id}/status.json")
            if status == 200 and '"finished": true' in text:
                outcome = re.search(r'"status": "(\w+)"', text).group(1)
                break
        self.record.jobs.append((kind, job_id, outcome))
        return outcome

    async def close(self) -> None:
        await self.http.close()


def _error_note(status: int, page: str) -> str:
    """What an error page says: Django's exception line (DEBUG) or the form's errors."""
    if 200 <= status < 400 and "errorlist" not in page:
        return ""
    found = re.search(r'<pre class="exception_value">(.*?)</pre>', page, re.S) or re.search(
        r'<ul class="errorlist[^"]*">(.*?)</ul>', page, re.S
    )
    return re.sub(r"<[^>]+>|\s+", " ", found.group(1)).strip()[:300] if found else ""


@dataclass
class Form:
    action: str
    fields: dict[str, str | list[str]]


class _FormParser(HTMLParser):
    """The forms of a page with the values a browser would send as they stand (no file fields)."""

    def __init__(self):
        super().__init__()
        self.forms: list[Form] = []
        self._select: tuple[str, bool] | None = None  # name, multiple
        self._first_option: str | None = None

    def handle_starttag(self, tag, attrs):
        a = {key: value or "" for key, value in attrs}
        if tag == "form":
            self.forms.append(Form(a.get("action", ""), {}))
        elif not self.forms or "name" not in a and tag != "option":
            return
        elif tag == "input" and a.get("type", "text") not in ("file", "submit", "button"):
            if a.get("type") not in ("checkbox", "radio") or "checked" in a:
                self.forms[-1].fields[a["name"]] = a.get("value", "")
        elif tag == "textarea":
            self.forms[-1].fields[a["name"]] = ""
        elif tag == "select":
            self._select, self._first_option = (a["name"], "multiple" in a), None
        elif tag == "option" and self._select:
            name, multiple = self._select
            value = a.get("value", "")
            if "selected" in a:
                fields = self.forms[-1].fields
                fields[name] = [*fields.get(name, []), value] if multiple else value
            elif self._first_option is None and not multiple:
                self._first_option = value

    def handle_endtag(self, tag):
        if tag == "select" and self._select:
            name, multiple = self._select
            if not multiple and name not in self.forms[-1].fields and self._first_option is not None:
                self.forms[-1].fields[name] = self._first_option
            self._select = None


def forms_read(page: str) -> dict[str, Form]:
    """The page's forms by each of their field names (the admin's header holds a logout form too)."""
    parser = _FormParser()
    parser.feed(page)
    return {name: form for form in parser.forms for name in form.fields}


async def annotator(browser: Browser, *, think: float, until: float, seed: int) -> None:
    """One simulated person: next unit (GET /annotate/ shows it), read and score, submit; until
    ``until`` (monotonic) or no unit is left. An error answer is kept and the person goes on."""
    rng = random.Random(seed)
    record = browser.record
    while time.monotonic() < until:
        status, page, _ = await browser.request("next unit (GET /annotate/)", "GET", "/annotate/")
        if status == 200 and "Nothing left to score" in page:
            record.annotators_done += 1
            return
        if status != 200:
            await asyncio.sleep(1)
            continue
        keys, token, action = unit_form(page)
        await asyncio.sleep(rng.uniform(0, 2 * think))  # reading and scoring
        data = unit_answers(keys, token, rng)
        status, _, _ = await browser.request("submit (POST unit)", "POST", action, data=data)
        if status == 302:
            record.acknowledged[int(re.search(r"/u/(\d+)/", action).group(1))] = len(keys)
        else:
            await asyncio.sleep(1)


async def jobs_in_turn(browser: Browser, kind: str, until: float, submit) -> None:
    """Start a job with ``submit(n)`` (n = 1, 2, …), which returns its id, None when the page
    refused it, or False when there is nothing to start yet; wait for its end, start the next; no
    new one after ``until``."""
    n = 0
    while time.monotonic() < until:
        job_id = await submit(n + 1)
        if job_id is False:  # nothing to start yet
            await asyncio.sleep(JOB_POLL_S)
            continue
        n += 1
        await browser.job_wait(kind, job_id)


async def browsing(browser: Browser, *, until: float, dataset: str) -> None:
    """The researcher's other tab: the dataset's workspace and the job list, now and then."""
    while time.monotonic() < until:
        await browser.request("dashboard (GET /dashboard/<dataset>/)", "GET", f"/dashboard/{dataset}/")
        await browser.request("job list (GET /jobs/)", "GET", "/jobs/")
        await asyncio.sleep(BROWSE_EVERY_S)


async def commands_in_turn(record: Record, *, until: float, env: dict, root: Path, command, done: list[str]) -> None:
    """Run ``command(n)`` (a manage.py command line for ``config.stack manage``; it returns it and
    the dataset it makes) one after another; the datasets of those that succeeded go to ``done``."""
    n = 0
    while time.monotonic() < until:
        n += 1
        arguments, dataset = command(n)
        start = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "config.stack", "manage", *arguments,
            cwd=root, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        output, _ = await process.communicate()
        tail = output.decode(errors="replace").strip().splitlines()[-3:]
        record.commands.append(
            (" ".join(arguments[:1]), process.returncode, time.perf_counter() - start, " / ".join(tail))
        )
        if process.returncode == 0:
            done.append(dataset)
        else:
            record.problems.append(f"manage {' '.join(arguments)}: exit {process.returncode}: {' / '.join(tail)}"[:400])
