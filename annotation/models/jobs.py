"""Every background job (imports, builds, retrieval, evaluation) leaves a Job row."""

from django.conf import settings
from django.db import models
from django.db.models import Q


def job_cache_key(job_id: int, what: str) -> str:
    """Cache key of a job's live progress, heartbeat or cancel flag."""
    return f"wellchosen:job:{job_id}:{what}"


class JobKind(models.TextChoices):
    IMPORT_DIALOGUES = "import_dialogues", "import dialogues"
    IMPORT_REPOSITORY = "import_repository", "import utterance repository"
    IMPORT_TESTSET = "import_testset", "import released test set"
    IMPORT_SCORES = "import_scores", "import scores"
    BUILD_TESTSET = "build_testset", "build test set"
    BUILD_INDEXES = "build_indexes", "build search indexes"
    BUILD_POOLS = "build_pools", "build candidate pools"
    QUALITY_REFRESH = "quality_refresh", "refresh quality and agreement"
    CROWD_PUBLISH = "crowd_publish", "publish a crowd batch"
    CROWD_SYNC = "crowd_sync", "sync a crowd batch"
    EVALUATE = "evaluate", "evaluate a system on a release"
    GENERATE = "generate", "generate responses with a system"
    CAMPAIGN = "campaign", "run a campaign's RANDOM trials and report"


class JobStatus(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


class Job(models.Model):
    FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)

    kind = models.CharField(max_length=40, choices=JobKind.choices)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    params = models.JSONField(default=dict, blank=True)
    progress = models.PositiveSmallIntegerField(default=0)
    total_count = models.PositiveBigIntegerField(default=0)
    done_count = models.PositiveBigIntegerField(default=0)
    failed_count = models.PositiveBigIntegerField(default=0)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(progress__lte=100), name="job_progress_0_100"),
            models.CheckConstraint(condition=Q(status__in=[s.value for s in JobStatus]), name="job_status_valid"),
        ]
        indexes = [models.Index(fields=["status", "kind"], name="job_status_kind")]

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk} ({self.status})"
