"""A shard's claim and heartbeat (core.services.job_shards): which worker runs a shard, and how it
keeps it.

A shard is claimed like a job: a conditional UPDATE of a pending shard, or of a running one whose
heartbeat is stale, that bumps ``attempts`` (only one of two concurrent claims matches the
attempts it read), so it works the same on SQLite and PostgreSQL; only the attempt that claimed a
shard may finish it. Each running shard keeps a heartbeat of its own (cache and row). Everything
here is scoped to one stage of the job's shards (``JobShard.stage``): shard numbers restart at 0
in each stage.
"""

import logging
import os
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.errors import JobCancelled
from core.models import Job, JobShard, JobShardStatus, JobStatus, job_cache_key

logger = logging.getLogger(__name__)

_REPORT_EVERY_SECONDS = 1.0
OPEN = (JobShardStatus.PENDING, JobShardStatus.RUNNING)


class ShardLost(Exception):
    """Another attempt took this shard over (this one was thought dead): its work is that attempt's now."""


def worker_identity() -> str:
    """Who claims a shard: host and process, recorded on the row."""
    return f"{socket.gethostname()}:{os.getpid()}"[:200]


def job_shard_claim(*, job_id: int, number: int | None = None, stage: str = "") -> JobShard | None:
    """Take a shard of the job's ``stage`` for this worker: shard ``number``, or with None the
    first pending one (then the first whose worker died). Pending, or running with a stale
    heartbeat: taken over, its attempts bumped. None when there is none to take."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.WELLCHOSEN_JOB_STALE_AFTER)
    open_shards = JobShard.objects.filter(job_id=job_id, stage=stage, status__in=OPEN)
    if number is not None:
        open_shards = open_shards.filter(number=number)
    for shard in sorted(open_shards, key=lambda s: (s.status != JobShardStatus.PENDING, s.number)):
        if shard.status == JobShardStatus.RUNNING and shard_alive_since(shard) >= stale_before:
            continue
        claimed = JobShard.objects.filter(pk=shard.pk, attempts=shard.attempts, status__in=OPEN).update(
            status=JobShardStatus.RUNNING,
            attempts=F("attempts") + 1,
            started_at=shard.started_at or now,
            heartbeat_at=now,
            worker=worker_identity(),
            error="",
        )
        if claimed:
            shard.refresh_from_db()
            cache.set(shard.cache_key("heartbeat"), now.timestamp(), timeout=None)
            if shard.attempts > 1:
                logger.warning("job %s: %s taken over (attempt %s)", job_id, _named(shard), shard.attempts)
            return shard
    return None


def _named(shard: JobShard) -> str:
    return f"{shard.stage} shard {shard.number}" if shard.stage else f"shard {shard.number}"


def shard_alive_since(shard: JobShard) -> datetime:
    """The shard's last heartbeat: the row's, or the cache's when newer (a report inside a
    transaction reaches only the cache)."""
    beats = [shard.heartbeat_at or shard.started_at or timezone.now()]
    cached = cache.get(shard.cache_key("heartbeat"))
    if cached is not None:
        beats.append(datetime.fromtimestamp(cached, tz=UTC))
    return max(beats)


class ShardProgress:
    """Progress of one running shard, with the interface of JobProgress (``update``): its counts
    go to the cache, and to the row when no transaction is open, which also beats its heartbeat.
    A report raises JobCancelled once the job was cancelled or has ended (another shard failed),
    and ShardLost once another attempt took the shard over. ``on_report``: called after each
    written report (the job's worker aggregates the shards into the job's progress)."""

    def __init__(self, shard: JobShard, *, on_report: Callable[[], None] | None = None) -> None:
        self.shard = shard
        self.on_report = on_report
        self.phase = ""
        self.counts = {"done_count": shard.done_count, "total_count": shard.total_count, "failed_count": 0}
        self._last_write = 0.0

    def update(
        self,
        *,
        done: int,
        total: int,
        failed: int = 0,
        force: bool = False,
        phase: str | None = None,
        unit: str | None = None,
        estimated: bool = False,
    ) -> None:
        self.counts = {"done_count": done, "total_count": total, "failed_count": failed}
        self.phase = phase if phase is not None else self.phase
        now = time.monotonic()
        if not force and now - self._last_write < _REPORT_EVERY_SECONDS:
            return
        self._last_write = now
        shard = self.shard
        beat = timezone.now()
        cache.set(shard.cache_key("progress"), self.counts, timeout=24 * 3600)
        cache.set(shard.cache_key("heartbeat"), beat.timestamp(), timeout=None)
        outside_transaction = not transaction.get_connection().in_atomic_block
        if outside_transaction:
            mine = JobShard.objects.filter(pk=shard.pk, attempts=shard.attempts, status=JobShardStatus.RUNNING)
            if not mine.update(heartbeat_at=beat, **self.counts):
                raise ShardLost()
        if self.stop_requested(read_row=outside_transaction):
            raise JobCancelled()
        if self.on_report is not None:
            self.on_report()

    def stop_requested(self, *, read_row: bool = True) -> bool:
        if cache.get(job_cache_key(self.shard.job_id, "cancel")):
            return True
        if not read_row:
            return False
        row = Job.objects.filter(pk=self.shard.job_id).values_list("status", "cancel_requested").first()
        return row is None or row[0] != JobStatus.RUNNING or row[1]
