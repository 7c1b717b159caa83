"""Systems on contrastive pair sets (Okano et al.): is the correct response less surprising than its
minimally edited incorrect twin?"""

from django.db import models

from .system import System
from .system_run import ScoringRun


class PairEvaluation(ScoringRun):
    """One system on one pair set: its losses on both responses of every counted pair."""

    # Results are derived from the pairs (recomputable): they go with the set, as with its pairs.
    pair_set = models.ForeignKey("pairs.PairSet", on_delete=models.CASCADE, related_name="evaluations")
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="pair_evaluations")

    class Meta(ScoringRun.Meta):
        constraints = [
            *ScoringRun.Meta.constraints,
            models.UniqueConstraint(fields=["pair_set", "system"], name="pairevaluation_unique_set_system"),
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
