"""A local HTTP test double of Prolific's REST API (the few endpoints WellChosen uses).

It checks every request (token header, JSON body, required fields) and answers in Prolific's
format: studies, their submissions with ``_links.next`` pagination, submission transitions, bonus
payments. ``requests`` records (method, path, body); ``errors`` every request it refused (400).
``fail_next`` makes the next requests answer with the given HTTP statuses (e.g. 429);
``next_link`` replaces the next link of every page (a link to another server, one that never ends);
``redirects`` answers a path with a 302 to another URL.
``Recorder`` is another local server, for links that lead away from the API: it records the
headers of every request it receives.
"""

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import parse_qs, urlsplit

TOKEN = "prolific-test-token"
STUDY_FIELDS = {
    "name",
    "internal_name",
    "description",
    "external_study_url",
    "prolific_id_option",
    "completion_codes",
    "total_available_places",
    "estimated_completion_time",
    "reward",
}


class Request(NamedTuple):
    method: str
    path: str
    body: Any


class ProlificDouble:
    def __init__(self, page_size: int = 2) -> None:
        self.page_size = page_size
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self.fail_next: list[int] = []
        self.fail_pay: list[int] = []  # statuses the next bulk-bonus pay calls answer with
        self.studies: dict[str, dict] = {}
        self.submissions: dict[str, dict] = {}  # id -> submission
        self.bonuses: dict[str, dict] = {}
        self.paid: list[str] = []
        # (path, page number) -> the href of that page's next link, or None on the last page
        self.next_link: Callable[[str, int], str | None] | None = None
        self.redirects: dict[str, str] = {}  # path -> where a 302 sends its requests
        self._lock = threading.Lock()

    # -- server ----------------------------------------------------------------------------------

    def __enter__(self) -> "ProlificDouble":
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                location = double.redirects.get(urlsplit(self.path).path)
                if location is not None:
                    double.requests.append(Request(self.command, urlsplit(self.path).path, None))
                    self.send_response(302)
                    self.send_header("Location", location)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status, body = double.handle(self.command, self.path, self.headers, raw)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/api/v1/"
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- helpers for tests -----------------------------------------------------------------------

    def add_submission(self, study_id: str, participant: str, status: str = "AWAITING REVIEW") -> str:
        sid = f"sub{len(self.submissions) + 1:04d}"
        self.submissions[sid] = {"id": sid, "study_id": study_id, "participant_id": participant, "status": status}
        return sid

    def sent(self, method: str, path: str) -> list[Any]:
        return [r.body for r in self.requests if r.method == method and r.path == path]

    # -- API -------------------------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers, raw: bytes) -> tuple[int, Any]:
        parts = urlsplit(raw_path)
        path = parts.path
        with self._lock:
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                return self._invalid(f"{method} {path}: body is not JSON")
            self.requests.append(Request(method, path, body))
            if headers.get("Authorization") != f"Token {TOKEN}":
                return 401, {"error": {"detail": "Invalid token."}}
            if self.fail_next:
                return self.fail_next.pop(0), {"error": {"detail": "try again"}}
            if raw and headers.get("Content-Type") != "application/json":
                return self._invalid(f"{method} {path}: Content-Type is not application/json")
            return self._route(method, path, parse_qs(parts.query), body)

    def _invalid(self, message: str) -> tuple[int, Any]:
        self.errors.append(message)
        return 400, {"error": {"detail": message}}

    def _route(self, method, path, query, body):
        p = path.removeprefix("/api/v1/").strip("/").split("/")
        if p == ["studies"] and method == "GET":
            return self._page([*self.studies.values()], query, "/api/v1/studies/")
        if p == ["studies"] and method == "POST":
            missing = STUDY_FIELDS - set(body or {})
            if missing:
                return self._invalid(f"study without {sorted(missing)}")
            if not isinstance(body["reward"], int) or body["reward"] <= 0:
                return self._invalid("reward must be a positive integer (minor currency units)")
            for name in ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}"):
                if name not in body["external_study_url"]:
                    return self._invalid(f"external_study_url lacks {name}")
            study = {**body, "id": f"study{len(self.studies) + 1:04d}", "status": "UNPUBLISHED"}
            self.studies[study["id"]] = study
            return 201, study
        if len(p) == 3 and p[0] == "studies" and p[2] == "transition" and method == "POST":
            study = self.studies.get(p[1])
            if study is None:
                return 404, {"error": {"detail": "Not found."}}
            action = (body or {}).get("action")
            if action not in ("PUBLISH", "STOP", "PAUSE", "START"):
                return self._invalid(f"unknown study action {action!r}")
            study["status"] = {"PUBLISH": "ACTIVE", "STOP": "COMPLETED"}.get(action, study["status"])
            return 200, study
        if len(p) == 3 and p[0] == "studies" and p[2] == "submissions" and method == "GET":
            rows = [s for s in self.submissions.values() if s["study_id"] == p[1]]
            return self._page(rows, query, path)
        if len(p) == 3 and p[0] == "submissions" and p[2] == "transition" and method == "POST":
            sub = self.submissions.get(p[1])
            if sub is None:
                return 404, {"error": {"detail": "Not found."}}
            action = (body or {}).get("action")
            if action == "REJECT" and not ((body or {}).get("message") and body.get("rejection_category")):
                return self._invalid("a rejection needs message and rejection_category")
            if action not in ("APPROVE", "REJECT") or sub["status"] != "AWAITING REVIEW":
                return self._invalid(f"cannot {action} a submission that is {sub['status']}")
            sub["status"] = "APPROVED" if action == "APPROVE" else "REJECTED"
            return 200, sub
        if p == ["submissions", "bonus-payments"] and method == "POST":
            if not (body or {}).get("study_id") or "," not in (body or {}).get("csv_bonuses", ""):
                return self._invalid("bonus needs study_id and csv_bonuses 'participant,amount'")
            bonus = {"id": f"bonus{len(self.bonuses) + 1:04d}", **body}
            self.bonuses[bonus["id"]] = bonus
            return 201, bonus
        if len(p) == 3 and p[0] == "bulk-bonus-payments" and p[2] == "pay" and method == "POST":
            if p[1] not in self.bonuses:
                return 404, {"error": {"detail": "Not found."}}
            if self.fail_pay:
                return self.fail_pay.pop(0), {"error": {"detail": "payment failed"}}
            if p[1] in self.paid:
                return self._invalid("this bulk bonus payment has already been paid")
            self.paid.append(p[1])
            return 202, {}
        return self._invalid(f"unknown endpoint {method} {path}")

    def _page(self, rows: list, query: dict, path: str):
        page = int(query.get("page", ["1"])[0])
        start = (page - 1) * self.page_size
        chunk = rows[start : start + self.page_size]
        more = start + self.page_size < len(rows)
        nxt = {"href": f"{self.url.rstrip('/').removesuffix('/api/v1')}{path}?page={page + 1}"} if more else None
        if self.next_link is not None:
            href = self.next_link(path, page)
            nxt = None if href is None else {"href": href}
        return 200, {"results": chunk, "_links": {"next": nxt}, "meta": {"count": len(rows)}}


class Recorder:
    """A local HTTP server that answers every request with an empty page of results and records its
    headers (``headers``, a list of dicts) and paths."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []

    def __enter__(self) -> "Recorder":
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                recorder.headers.append(dict(self.headers.items()))
                recorder.paths.append(self.path)
                data = json.dumps({"results": [], "_links": {"next": None}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/"
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
