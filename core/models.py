"""Every background job (imports, builds, retrieval, evaluation) leaves a Job row; a job whose work
divides (candidate pools) has JobShard rows, one per part, that any worker may claim.

The table keeps the name it was created with (``annotation_job``): the model moved here from the
annotation app without touching the data (see docs/architecture.md).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.job_registry import job_kind_label


def job_cache_key(job_id: int, what: str) -> str:
    """Cache key of a job's live progress, heartbeat or cancel flag."""
    return f"wellchosen:job:{job_id}:{what}"


def job_shard_cache_key(job_id: int, number: int, what: str, *, stage: str) -> str:
    """Cache key of a shard's live progress or heartbeat (shard numbers restart at 0 in each stage)."""
    return f"wellchosen:job:{job_id}:shard:{stage}:{number}:{what}"


class JobStatus(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


class Job(models.Model):
    FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)

    # A name from the job-kind registry (core.job_registry), which each app fills from its
    # AppConfig.ready(): no choices here, so adding a kind to one app needs no migration here.
    kind = models.CharField(max_length=40)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    params = models.JSONField(default=dict, blank=True)
    progress = models.PositiveSmallIntegerField(default=0)
    total_count = models.PositiveBigIntegerField(default=0)
    done_count = models.PositiveBigIntegerField(default=0)
    failed_count = models.PositiveBigIntegerField(default=0)
    # What the counts count ("scoring words"): a job of several steps names the one running.
    phase = models.CharField(max_length=64, blank=True)
    # Every phase seen, in order: {"name", "unit", "done", "total", "failed", "estimated", "seconds"}
    # ("seconds": its duration; null and "started", epoch seconds, for the one running). Written by
    # core.services.jobs.JobProgress; the counts above are the last phase's.
    phases = models.JSONField(default=list, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # what started a job that no person started (empty: a person, on a page or the command line)
    trigger = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When its message was last sent to its queue: at creation, and again when a failed job is
    # retried (its place in the queue, and how long it has waited there).
    queued_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotation_job"
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(progress__lte=100), name="job_progress_0_100"),
            models.CheckConstraint(condition=Q(status__in=[s.value for s in JobStatus]), name="job_status_valid"),
        ]
        indexes = [models.Index(fields=["status", "kind"], name="job_status_kind")]

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def kind_label(self) -> str:
        """The registered kind's label; the bare name for a kind no installed app declares."""
        return job_kind_label(self.kind)

    def __str__(self) -> str:
        return f"{self.kind_label} #{self.pk} ({self.status})"


class JobShardStatus(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"


class JobShard(models.Model):
    """One part of a job's work (a block of questions), planned once by the job's handler and run
    by whichever worker claims it (core.services.job_shards). Claimed like a job: pending, or
    running with a stale heartbeat (its worker died); only the attempt that claimed it may finish it.

    A job may run several stages of shards one after the other (the pool job: its encoding, then
    its questions); each stage is its own plan, numbered from 0, with its own shard handler."""

    FINISHED = (JobShardStatus.SUCCEEDED, JobShardStatus.FAILED)

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="shards")
    # Which of the job's plans this shard belongs to ("" for a job of one stage).
    stage = models.CharField(max_length=32, blank=True, default="")
    number = models.PositiveIntegerField()  # 0 .. n-1 within the stage, in the order of the work
    # What the kind's shard handler needs to find its part, e.g. {"first_id": .., "last_id": ..}.
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=JobShardStatus.choices, default=JobShardStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True)  # host:pid of the attempt that claimed it last
    total_count = models.PositiveBigIntegerField(default=0)
    done_count = models.PositiveBigIntegerField(default=0)
    failed_count = models.PositiveBigIntegerField(default=0)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "id"]  # the order they were planned in: stage by stage, then by number
        constraints = [
            models.UniqueConstraint(fields=["job", "stage", "number"], name="job_shard_stage_number_unique"),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in JobShardStatus]), name="job_shard_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(status=JobShardStatus.PENDING) | Q(attempts__gte=1), name="job_shard_claimed_has_attempt"
            ),
        ]

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    def cache_key(self, what: str) -> str:
        return job_shard_cache_key(self.job_id, self.number, what, stage=self.stage)

    def __str__(self) -> str:
        stage = f"{self.stage} " if self.stage else ""
        return f"{stage}shard {self.number} of job #{self.job_id} ({self.status})"
