"""What every run of a system shares (an evaluation on a test set, on a pair set, a generation):
its status follows its job, and it records the system version it ran (evaluation/services/system_runs.py)."""

from django.db import models
from django.db.models import Q

SYSTEM_REVISION_HELP = (
    "The exact weights when results were first written: the system's Hugging Face checkpoint and commit "
    "(repo@sha); empty for a local directory or a plugin."
)


class EvaluationStatus(models.TextChoices):
    """The status of a system run (:class:`SystemRun`)."""

    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


class SystemRun(models.Model):
    """A system run on some input, by a job that can be cancelled and resumed.

    Concrete runs add their ``system`` (a foreign key to System) and their input, unique together."""

    status = models.CharField(max_length=16, choices=EvaluationStatus.choices, default=EvaluationStatus.PENDING)
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The system's updated_at when results were first written: a changed system needs a new run.
    system_version = models.DateTimeField(null=True, blank=True)
    system_revision = models.CharField(max_length=200, blank=True, help_text=SYSTEM_REVISION_HELP)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in EvaluationStatus]), name="%(class)s_status_valid"
            ),
        ]


class ScoringRun(SystemRun):
    """A run that scores (a test set's candidates, a pair set's responses) and summarises its results."""

    summary = models.JSONField(default=dict, blank=True)

    class Meta(SystemRun.Meta):
        abstract = True
