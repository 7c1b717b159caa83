"""Systems on contrastive pair sets (Okano et al.): is the correct response less surprising than its
minimally edited incorrect twin?"""

from django.db import models
from django.db.models import Q

from .system import SYSTEM_REVISION_HELP, EvaluationStatus, System


class PairEvaluation(models.Model):
    """One system on one pair set: its losses on both responses of every counted pair."""

    # Results are derived from the pairs (recomputable): they go with the set, as with its pairs.
    pair_set = models.ForeignKey("pairs.PairSet", on_delete=models.CASCADE, related_name="evaluations")
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="pair_evaluations")
    status = models.CharField(max_length=16, choices=EvaluationStatus.choices, default=EvaluationStatus.PENDING)
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The system's updated_at when results were first written: a changed system needs a new evaluation.
    system_version = models.DateTimeField(null=True, blank=True)
    system_revision = models.CharField(max_length=200, blank=True, help_text=SYSTEM_REVISION_HELP)
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["pair_set", "system"], name="pairevaluation_unique_set_system"),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in EvaluationStatus]), name="pairevaluation_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.system} on pairs {self.pair_set} ({self.status})"


class PairResult(models.Model):
    evaluation = models.ForeignKey(PairEvaluation, on_delete=models.CASCADE, related_name="results")
    pair = models.ForeignKey("pairs.Pair", on_delete=models.CASCADE, related_name="+")
    correct_loss = models.FloatField(help_text="Mean token cross-entropy of the correct response (nats).")
    incorrect_loss = models.FloatField(help_text="Mean token cross-entropy of the incorrect response (nats).")
    correct_sum_logprob = models.FloatField(null=True, blank=True)
    incorrect_sum_logprob = models.FloatField(null=True, blank=True)
    n_tokens = models.PositiveIntegerField(null=True, blank=True, help_text="Tokens of the correct response.")
    correct = models.BooleanField(help_text="The correct response has the lower loss.")

    class Meta:
        ordering = ["evaluation_id", "pair_id"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "pair"], name="pairresult_unique_pair"),
        ]
