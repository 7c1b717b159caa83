"""The requester side of Amazon Mechanical Turk through boto3's ``mturk`` client.

Sandbox by default; production only when the batch asks for it *and* the deployment allows it
(``WELLCHOSEN_MTURK_ALLOW_PRODUCTION``). Credentials come from the environment or the standard AWS
configuration, never from the database. Throttling and unavailability are retried with
exponential backoff here (botocore's own retries are off, so tests see every call); a call that
creates or pays carries a UniqueRequestToken, and a replay that MTurk refuses as already done is
reported as :class:`AlreadyDone` so the caller looks the object up instead of failing.
"""

import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeAlias
from xml.sax.saxutils import escape

from django.conf import settings

from core.errors import UserError

logger = logging.getLogger(__name__)

SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
PRODUCTION_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"
SANDBOX_WORKER_URL = "https://workersandbox.mturk.com"
PRODUCTION_WORKER_URL = "https://www.mturk.com"

# The forms MTurk's service model gives its ids (EntityId; a worker is a CustomerId, "A..."): a
# value of another form cannot come from MTurk.
MTURK_ENTITY_ID = re.compile(r"^[A-Z0-9]{1,64}$")
MTURK_WORKER_ID = re.compile(r"^A[A-Z0-9]{1,63}$")

# System qualification types (MTurk documentation, "QualificationRequirement").
QUAL_APPROVAL_RATE = "000000000000000000L0"  # PercentAssignmentsApproved
QUAL_NUMBER_APPROVED = "00000000000000000040"  # NumberHITsApproved
QUAL_LOCALE = "00000000000000000071"  # Worker_Locale

RETRYABLE_CODES = {
    "ThrottlingException",
    "Throttling",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "RequestLimitExceeded",
    "TooManyRequestsException",
}
_ALREADY_DONE = re.compile(r"already (been performed|exists)|HitAlreadyExists|UniqueRequestToken", re.IGNORECASE)
_HIT_ID = re.compile(r"\b([A-Z0-9]{30})\b")

# A boto3 "mturk" client (``client_create``, or botocore's Stubber's client in the tests). botocore
# makes its class at run time from the service model, so there is no class to name here.
MTurkClient: TypeAlias = Any

TOKEN_MAX = 64
NOTIFY_MAX_WORKERS = 100
FEEDBACK_MAX = 1024


class MTurkError(UserError):
    """MTurk refused a request; its code and message are kept for the researcher."""

    def __init__(self, operation: str, code: str, message: str) -> None:
        self.operation, self.code, self.message = operation, code, message
        super().__init__(f"MTurk {operation}: {code}: {message}")


class AlreadyDone(MTurkError):
    """A replayed UniqueRequestToken: the first call went through."""


def request_token(kind: str, *parts: object) -> str:
    """A UniqueRequestToken derived from our ids, at most 64 characters, the same on every retry."""
    raw = ":".join(str(p) for p in parts)
    token = f"wc-{kind}-{raw}"
    if len(token) > TOKEN_MAX:
        token = f"wc-{kind}-{hashlib.sha256(raw.encode()).hexdigest()[:40]}"
    return token[:TOKEN_MAX]


def endpoint_url(*, production: bool) -> str:
    if not production:
        return settings.WELLCHOSEN_MTURK_SANDBOX_ENDPOINT
    if not settings.WELLCHOSEN_MTURK_ALLOW_PRODUCTION:
        raise UserError("production MTurk is off for this deployment (set WELLCHOSEN_MTURK_ALLOW_PRODUCTION=1)")
    return PRODUCTION_ENDPOINT


def client_create(*, production: bool) -> MTurkClient:
    """A boto3 mturk client for the sandbox or production endpoint, with botocore's retries off."""
    import boto3
    from botocore.config import Config

    return boto3.session.Session().client(
        "mturk",
        region_name="us-east-1",
        endpoint_url=endpoint_url(production=production),
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=10, read_timeout=30),
    )


class MTurk:
    """The calls WellChosen makes, each through :meth:`call` (retry, error translation)."""

    def __init__(self, client: MTurkClient, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self.sleep = sleep

    def call(self, operation: str, **params):
        from botocore.exceptions import ClientError, ConnectionError, NoCredentialsError, ReadTimeoutError

        attempts = max(1, settings.WELLCHOSEN_CROWD_RETRIES)
        for attempt in range(attempts):
            try:
                return getattr(self.client, operation)(**params)
            except ClientError as exc:
                error = exc.response.get("Error", {})
                code, message = error.get("Code", "?"), error.get("Message", str(exc))
                if _retryable(code, message) and attempt + 1 < attempts:
                    self._backoff(operation, attempt, code)
                    continue
                if "UniqueRequestToken" in params and _ALREADY_DONE.search(message):
                    raise AlreadyDone(operation, code, message) from exc
                raise MTurkError(operation, code, message) from exc
            except NoCredentialsError as exc:
                raise MTurkError(
                    operation,
                    "NoCredentials",
                    "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or a role",
                ) from exc
            except (ConnectionError, ReadTimeoutError) as exc:
                # Only calls that are safe to repeat: reads, or writes that carry a token.
                safe = operation.startswith(("get_", "list_")) or "UniqueRequestToken" in params
                if safe and attempt + 1 < attempts:
                    self._backoff(operation, attempt, type(exc).__name__)
                    continue
                raise MTurkError(operation, type(exc).__name__, str(exc)) from exc
        raise AssertionError("unreachable")

    def _backoff(self, operation: str, attempt: int, code: str) -> None:
        delay = settings.WELLCHOSEN_CROWD_RETRY_BASE_SECONDS * (2**attempt)
        logger.warning("MTurk %s: %s, retrying in %.1f s", operation, code, delay)
        self.sleep(delay)

    def paginate(self, operation: str, key: str, **params) -> Iterator[dict]:
        """Every item of a paginated list call (NextToken, MaxResults <= 100)."""
        params.setdefault("MaxResults", 100)
        token = None
        while True:
            page = self.call(operation, **params, **({"NextToken": token} if token else {}))
            yield from page.get(key, [])
            token = page.get("NextToken")
            if not token:
                return


def _retryable(code: str, message: str) -> bool:
    return code in RETRYABLE_CODES or "rate exceeded" in message.lower()


def hit_id_in(message: str) -> str | None:
    match = _HIT_ID.search(message)
    return match.group(1) if match else None


def external_question_xml(*, url: str, frame_height: int = 0) -> str:
    return (
        '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
        '2006-07-14/ExternalQuestion.xsd">'
        f"<ExternalURL>{escape(url)}</ExternalURL><FrameHeight>{int(frame_height)}</FrameHeight>"
        "</ExternalQuestion>"
    )


def html_question_xml(*, url: str, frame_height: int = 0) -> str:
    """HTMLQuestion alternative: a small page that frames the same annotator URL (MTurk appends
    the assignment parameters to the frame's URL with a script)."""
    html = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
        f"<iframe id='wc' style='width:100%;height:90vh;border:0' data-src='{escape(url)}'></iframe>"
        "<script>var f=document.getElementById('wc');"
        "f.src=f.dataset.src+(f.dataset.src.indexOf('?')<0?'?':'&')+location.search.slice(1);</script>"
        "</body></html>"
    )
    return (
        '<HTMLQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
        '2011-11-11/HTMLQuestion.xsd">'
        f"<HTMLContent><![CDATA[{html}]]></HTMLContent><FrameHeight>{int(frame_height)}</FrameHeight>"
        "</HTMLQuestion>"
    )


def chunks(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
