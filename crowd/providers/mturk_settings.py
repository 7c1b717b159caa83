"""An MTurk batch's settings over MTurk's defaults, validated; and the address MTurk frames. Read
by the provider (publishing, blocks, the lease) and by the ExternalQuestion entry (mturk_entry)."""

import re

from django.conf import settings

from core.errors import UserError
from crowd.models import CrowdBatch

DEFAULTS = {
    "title": "Rate replies in short dialogues",
    "description": "Read a short dialogue and score how well each reply fits it, from 0 to 5.",
    "keywords": "dialogue, rating, English, text",
    "reward": "0.30",
    "assignment_duration_seconds": 1800,
    "auto_approval_delay_seconds": 3 * 86400,
    "lifetime_seconds": 7 * 86400,
    "locales": ["US"],
    "min_approval_rate": 95,
    "min_approved": 1000,
    "question": "external",  # or "html"
    "frame_height": 0,
    "block": "soft",  # soft: a qualification that keeps the worker out; hard: CreateWorkerBlock
}
_REWARD = re.compile(r"^\d{1,4}\.\d{2}$")


def _task_wording(batch: CrowdBatch) -> dict:
    """A rating dataset asks for 1-5 ratings of generated replies, not 0-5 scores."""
    if batch.dataset_id is not None and batch.dataset.is_rating:
        return {"description": "Read a short dialogue and rate how good each reply is as its next turn, from 1 to 5."}
    return {}


def mturk_settings(batch: CrowdBatch) -> dict:
    """The batch's settings over the defaults, validated (a clear error names the bad setting)."""
    merged = {**DEFAULTS, **_task_wording(batch), **(batch.settings or {})}
    if not _REWARD.match(str(merged["reward"])):
        raise UserError(f"reward {merged['reward']!r} must be dollars with two decimals, e.g. 0.30")
    for name, lo, hi in (
        ("assignment_duration_seconds", 30, 31_536_000),
        ("auto_approval_delay_seconds", 0, 2_592_000),
        ("lifetime_seconds", 30, 31_536_000),
        ("min_approval_rate", 0, 100),
        ("min_approved", 0, 10**9),
    ):
        value = merged[name]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise UserError(f"setting {name} must be an integer from {lo} to {hi}, not {value!r}")
    if merged["question"] not in ("external", "html"):
        raise UserError("setting question must be 'external' or 'html'")
    if merged["block"] not in ("soft", "hard"):
        raise UserError("setting block must be 'soft' or 'hard'")
    for name in ("title", "description"):
        if not str(merged[name]).strip():
            raise UserError(f"setting {name} is empty")
    return merged


def annotator_url() -> str:
    base = settings.WELLCHOSEN_PUBLIC_URL.rstrip("/")
    if not base.startswith("https://"):
        raise UserError("MTurk frames only HTTPS pages: set WELLCHOSEN_PUBLIC_URL to this site's https:// address")
    return f"{base}/crowd/mturk/"
