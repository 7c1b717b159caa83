"""Prolific as a crowd provider, over its REST API (``Authorization: Token ...``).

A batch is one study: its external URL is the batch's signed link with Prolific's
``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID`` placeholders; places = K and every participant
scores every unit of the batch (so each unit gets K annotators); the participant gets the study's
completion code at the end. Sync reads the study's submissions; review, bonuses and stopping are
Prolific's transitions. The token comes from ``PROLIFIC_API_TOKEN``, never from the database, and
is sent to PROLIFIC_API_URL's origin only: a link in an answer that leads elsewhere is refused.
"""

import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from decimal import Decimal
from urllib.parse import SplitResult, urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from core.errors import UserError
from crowd.models import CrowdAssignment, CrowdAssignmentStatus, CrowdBatch, CrowdBonus, CrowdProvider

from .base import Blocking, Provider, SyncReport, entry_settings_check
from .link import WORKER_ID, LinkProvider, link_url

logger = logging.getLogger(__name__)

_STATUS = {
    "AWAITING REVIEW": CrowdAssignmentStatus.SUBMITTED,
    "APPROVED": CrowdAssignmentStatus.APPROVED,
    "REJECTED": CrowdAssignmentStatus.REJECTED,
    "RETURNED": CrowdAssignmentStatus.RETURNED,
    "TIMED-OUT": CrowdAssignmentStatus.RETURNED,
}
RETRY_STATUSES = {429, 502, 503, 504}
# The most pages one list is read over (a study's submissions come 100 or more a page): an answer
# whose next link never ends would otherwise keep a sync reading forever.
MAX_PAGES = 1_000


class ProlificError(UserError):
    pass


class ProlificApi:
    def __init__(
        self,
        *,
        base_url: str | None = None,
        token: str | None = None,
        sleep=time.sleep,
        max_pages: int = MAX_PAGES,
    ) -> None:
        self.base_url = (base_url or settings.PROLIFIC_API_URL).rstrip("/") + "/"
        self.token = token if token is not None else os.environ.get("PROLIFIC_API_TOKEN", "")
        self.sleep = sleep
        self.max_pages = max_pages
        # urllib passes the Authorization header on to wherever a redirect leads
        self.opener = urllib.request.build_opener(_SameOriginRedirects(self))

    def url(self, path: str) -> str:
        """``path`` under the API's base URL; an absolute URL only on the base URL's origin (scheme,
        host and port), since the request carries the token."""
        parts = urlsplit(path)
        if not parts.scheme and not parts.netloc:
            return self.base_url + path.lstrip("/")
        if not self.on_origin(path):
            raise ProlificError(
                f"Prolific answered with a link to {path[:200]!r}, which is not on PROLIFIC_API_URL's "
                f"origin ({self.base_url}): not followed, so the API token was not sent there"
            )
        return path

    def on_origin(self, url: str) -> bool:
        origin = _origin(urlsplit(url))
        return origin is not None and origin == _origin(urlsplit(self.base_url))

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        if not self.token:
            raise ProlificError("set PROLIFIC_API_TOKEN to use Prolific")
        url = self.url(path)
        data = None if body is None else json.dumps(body).encode()
        attempts = max(1, settings.WELLCHOSEN_CROWD_RETRIES)
        for attempt in range(attempts):
            request = urllib.request.Request(url, data=data, method=method)
            request.add_header("Authorization", f"Token {self.token}")
            request.add_header("Accept", "application/json")
            if data is not None:
                request.add_header("Content-Type", "application/json")
            try:
                with self.opener.open(request, timeout=30) as response:
                    raw = response.read()
                    return json.loads(raw) if raw else {}
            except urllib.error.HTTPError as exc:
                if exc.code in RETRY_STATUSES and attempt + 1 < attempts:
                    delay = settings.WELLCHOSEN_CROWD_RETRY_BASE_SECONDS * (2**attempt)
                    logger.warning("Prolific %s %s: HTTP %s, retrying in %.1f s", method, path, exc.code, delay)
                    self.sleep(delay)
                    continue
                detail = exc.read().decode("utf-8", "replace")[:500]
                raise ProlificError(f"Prolific {method} {path}: HTTP {exc.code}: {detail}") from exc
            except urllib.error.URLError as exc:
                raise ProlificError(f"Prolific {method} {path}: {exc.reason}") from exc
        raise AssertionError("unreachable")

    def pages(self, path: str):
        """Every result of a paginated list (``_links.next.href``), over at most ``max_pages`` pages."""
        url = path
        for _ in range(self.max_pages):
            page = self.call("GET", url)
            yield from page.get("results", [])
            url = ((page.get("_links") or {}).get("next") or {}).get("href")
            if not url:
                return
        raise ProlificError(
            f"Prolific GET {path}: still a next page after {self.max_pages:,} pages; stopped reading "
            f"(more than a study's submissions or an account's studies fill, or next links that never end)"
        )


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    def __init__(self, api: ProlificApi) -> None:
        self.api = api

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if not self.api.on_origin(newurl):
            raise ProlificError(
                f"Prolific redirected {req.get_method()} {req.full_url} to {newurl[:200]!r}, which is not on "
                f"PROLIFIC_API_URL's origin ({self.api.base_url}): not followed, so the API token was not sent there"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _origin(parts: SplitResult) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a URL, the port filled in for http and https; None when unreadable."""
    try:
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    default = {"http": 80, "https": 443}.get(scheme)
    if parts.hostname is None or (port is None and default is None):
        return None
    return scheme, parts.hostname.lower(), port if port is not None else default


class ProlificProvider(Provider):
    name = CrowdProvider.PROLIFIC
    blocking = Blocking.BY_HAND  # participants are Prolific accounts; its API has no call to block one
    enters_by_link = True  # the study's external URL is the batch's signed link

    def __init__(self, *, api: ProlificApi | None = None) -> None:
        """``api``: Prolific's REST API (by default at PROLIFIC_API_URL with PROLIFIC_API_TOKEN)."""
        self.api = api or ProlificApi()

    # -- rules --------------------------------------------------------------------------------

    def fee(self, *, batch: CrowdBatch) -> Decimal:
        return Decimal(str((batch.settings or {}).get("fee_rate", "0.333")))

    def settings_check(self, *, batch: CrowdBatch) -> None:
        entry_settings_check(batch=batch)

    def units_per_worker(self, *, batch: CrowdBatch) -> int:
        # K places, and each participant scores every unit of the batch.
        if "units_per_worker" in (batch.settings or {}):
            return super().units_per_worker(batch=batch)
        return batch.tasks.count()

    def link_worker_id(self, *, params: Mapping[str, str]) -> str:
        return params.get("PROLIFIC_PID", "")

    def link_entry_check(self, *, batch: CrowdBatch, params: Mapping[str, str]) -> None:
        # Prolific's study URL always carries the study and the participant's session: a visit
        # without them did not come from this study on Prolific.
        study = params.get("STUDY_ID", "")
        if not study:
            raise UserError("open this study from Prolific: the link must carry its STUDY_ID")
        if study != batch.external_id:
            raise UserError("this link belongs to another Prolific study")
        if not WORKER_ID.fullmatch(params.get("SESSION_ID", "")):
            raise UserError("open this study from Prolific: the link must carry your SESSION_ID")

    def link_session(self, *, params: Mapping[str, str]) -> str:
        return params.get("SESSION_ID", "")

    def reviewed_with(self, *, crowd_assignment: CrowdAssignment) -> QuerySet[CrowdAssignment]:
        # One Prolific submission covers all of the participant's units in the batch.
        return CrowdAssignment.objects.filter(
            batch=crowd_assignment.batch,
            worker=crowd_assignment.worker,
            status__in=[CrowdAssignmentStatus.SUBMITTED, CrowdAssignmentStatus.REJECTED],
        )

    # -- what happens on Prolific -------------------------------------------------------------

    def publish(self, *, batch: CrowdBatch) -> None:
        LinkProvider().publish(batch=batch)  # tasks open, completion code made
        batch.refresh_from_db()
        if not batch.external_id:
            existing = [s for s in self.api.pages("studies/") if s.get("internal_name") == batch.token]
            study = existing[0] if existing else self.api.call("POST", "studies/", self._study(batch))
            batch.external_id = study["id"]
            batch.save(update_fields=["external_id"])
            self.api.call("POST", f"studies/{batch.external_id}/transition/", {"action": "PUBLISH"})

    def _study(self, batch: CrowdBatch) -> dict:
        config = batch.settings or {}
        reward = Decimal(str(config.get("reward", "0")))
        if reward <= 0:
            raise UserError("a Prolific study needs a reward (setting reward, in the account's currency)")
        url = link_url(batch=batch)
        if not url.startswith("https://"):
            raise UserError("set WELLCHOSEN_PUBLIC_URL to this site's https:// address")
        return {
            "name": config.get("title", "Rate replies in short dialogues"),
            "internal_name": batch.token,
            "description": config.get(
                "description",
                "Rate how good replies to short dialogues are (1-5)."
                if batch.dataset.is_rating
                else "Score how well replies fit short dialogues (0-5).",
            ),
            "external_study_url": url + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
            "&SESSION_ID={{%SESSION_ID%}}",
            "prolific_id_option": "url_parameters",
            "completion_codes": [
                {
                    "code": batch.completion_code,
                    "code_type": "COMPLETED",
                    "actions": [{"action": "MANUALLY_REVIEW"}],
                }
            ],
            "total_available_places": batch.dataset.annotators_per_item,
            "estimated_completion_time": int(config.get("estimated_minutes", 15)),
            "reward": int(reward * 100),
            "device_compatibility": ["desktop", "tablet", "mobile"],
        }

    def sync(self, *, batch: CrowdBatch) -> SyncReport:
        report = SyncReport(tasks=batch.tasks.count())
        if not batch.external_id:
            return report
        for submission in self.api.pages(f"studies/{batch.external_id}/submissions/"):
            report.seen += 1
            status = _STATUS.get(submission.get("status", ""))
            mine = CrowdAssignment.objects.filter(batch=batch, worker__external_id=submission["participant_id"])
            if not mine.exists():
                report.submitted_without_scores.append(submission["id"])
                continue
            with transaction.atomic():
                first = mine.filter(imported_at__isnull=True).exists()
                values = {"external_status": submission.get("status", "")}
                if status is not None:
                    values["status"] = status
                mine.update(**values)
                for ca in mine.select_for_update():
                    ca.answer = {**(ca.answer or {}), "submission_id": submission["id"]}
                    ca.imported_at = ca.imported_at or timezone.now()
                    ca.save(update_fields=["answer", "imported_at"])
            if first:
                report.imported += 1
            else:
                report.already_imported += 1
        return report

    def _submission(self, ca: CrowdAssignment) -> str:
        submission = (ca.answer or {}).get("submission_id")
        if not submission:
            raise UserError("sync the batch first: this participant's Prolific submission is not known yet")
        return submission

    def approve(self, *, crowd_assignment: CrowdAssignment, feedback: str, override_rejection: bool = False) -> None:
        self.api.call("POST", f"submissions/{self._submission(crowd_assignment)}/transition/", {"action": "APPROVE"})

    def reject(self, *, crowd_assignment: CrowdAssignment, feedback: str) -> None:
        self.api.call(
            "POST",
            f"submissions/{self._submission(crowd_assignment)}/transition/",
            {"action": "REJECT", "message": feedback, "rejection_category": "LOW_EFFORT"},
        )

    def bonus(self, *, bonus: CrowdBonus) -> None:
        # Prolific takes no idempotency token: the bulk bonus it sets up is recorded (committed)
        # before it is paid, and a retry pays that same bulk bonus, never a second one.
        if not bonus.external_ref:
            ca = bonus.crowd_assignment
            setup = self.api.call(
                "POST",
                "submissions/bonus-payments/",
                {"study_id": ca.batch.external_id, "csv_bonuses": f"{ca.worker.external_id},{bonus.amount:.2f}"},
            )
            bonus.external_ref = str(setup["id"])
            type(bonus).objects.filter(pk=bonus.pk).update(external_ref=bonus.external_ref)
        self.api.call("POST", f"bulk-bonus-payments/{bonus.external_ref}/pay/", {})

    def expire(self, *, batch: CrowdBatch) -> None:
        LinkProvider().expire(batch=batch)
        if batch.external_id:
            self.api.call("POST", f"studies/{batch.external_id}/transition/", {"action": "STOP"})
