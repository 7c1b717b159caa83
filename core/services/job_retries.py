"""Retrying a failed job: the same Job row sent to its queue again, so that it resumes.

A retry runs the job that failed again, not a copy of it. Its row goes back to pending (error,
times and progress cleared; ``attempts`` keeps counting) and one message goes to its kind's queue,
as at its creation. Everything the job's work is keyed on stays: its shards (those that succeeded
are kept and not run again; failed and unfinished ones are pending again) and what its handler
recorded with the job (the dense index version an encoding writes names its job). The handler then
runs as it does for an attempt that takes over a job whose worker died (``job_claim`` of a stale
job), and finds the committed work of the attempts before it:

- sharded kinds (pools, negatives, evaluations, pair evaluations, generations, campaigns, the dense
  encoding of the index job) keep their plan and their succeeded shards; a shard that failed runs
  again whole, and kinds that commit batch by batch skip inside it what is committed;
- the dense encoding goes on with the version its shards write, at the same version number (a
  failed encoding keeps its version building, with its finished blocks on disk, for this);
- imports and test-set builds run in one transaction, which the failure rolled back: they run
  again from the start.

Pages that show a dataset's or an evaluation's newest job show the retried job, pending again; the
failed attempt's error is replaced (the worker's log keeps it).
"""

import logging

from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from core.errors import UserError
from core.job_registry import job_kind_get
from core.models import Job, JobShard, JobShardStatus, JobStatus, job_cache_key
from core.selectors import job_retry_permitted
from core.services.jobs import job_enqueue

logger = logging.getLogger(__name__)


def job_retry(*, job_id: int, user) -> bool:
    """Send the failed job ``job_id`` to its queue again, to resume where its committed work stops
    (see the module's docstring), once the surrounding transaction commits. Returns False, and
    sends nothing, when the job is not failed: a second click finds it pending already.

    Raises UserError for a job that does not exist or whose kind no installed app declares, and
    PermissionDenied for a ``user`` who may not start a job of its kind (``job_retry_permitted``)."""
    with transaction.atomic():
        # The lock orders two clicks; the status in the UPDATE's filter is what makes the second
        # one do nothing on a database without row locks (SQLite).
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None:
            raise UserError(f"no job #{job_id}")
        job_kind_get(job.kind)
        if not job_retry_permitted(kind=job.kind, user=user):
            raise PermissionDenied(f"{user} may not start a job of the kind {job.kind}")
        reset = Job.objects.filter(pk=job.pk, status=JobStatus.FAILED).update(
            status=JobStatus.PENDING,
            queued_at=timezone.now(),
            started_at=None,
            heartbeat_at=None,
            finished_at=None,
            cancel_requested=False,
            error="",
            result={},
            progress=0,
            done_count=0,
            total_count=0,
            failed_count=0,
            phase="",
            phases=[],
        )
        if not reset:
            return False
        # A shard still marked running belonged to the failed attempt: its worker, if alive, stops at
        # its next report (the row is no longer the running one it claimed).
        again = JobShard.objects.filter(job_id=job.pk).exclude(status=JobShardStatus.SUCCEEDED)
        shards = again.update(
            status=JobShardStatus.PENDING,
            worker="",
            error="",
            result={},
            done_count=0,
            failed_count=0,
            started_at=None,
            heartbeat_at=None,
            finished_at=None,
        )
        cache.delete_many([job_cache_key(job.pk, what) for what in ("progress", "cancel", "heartbeat", "requeued")])
        job_enqueue(job_id=job.pk, kind=job.kind)
    logger.info(
        "job %s (%s) retried by %s; %s shard(s) to run again; it had failed: %s",
        job.pk,
        job.kind,
        user,
        shards,
        job.error.split("\n", 1)[0],
    )
    return True
