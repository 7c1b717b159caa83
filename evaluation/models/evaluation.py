"""A system on a frozen test set: which candidate it selects for every question (Sato et al. §4)."""

from django.db import models

from .system import System
from .system_run import ScoringRun


class Evaluation(ScoringRun):
    """One system on one test set: which candidate it selects for every question."""

    testset = models.ForeignKey("testsets.TestSet", on_delete=models.PROTECT, related_name="evaluations")
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="evaluations")

    class Meta(ScoringRun.Meta):
        constraints = [
            *ScoringRun.Meta.constraints,
            models.UniqueConstraint(fields=["testset", "system"], name="evaluation_unique_testset_system"),
        ]

    def __str__(self) -> str:
        return f"{self.system} on {self.testset} ({self.status})"


class QuestionResult(models.Model):
    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="questions")
    item = models.ForeignKey("testsets.TestSetQuestion", on_delete=models.PROTECT, related_name="+")
    selected_position = models.PositiveSmallIntegerField(help_text="Position of the lowest-loss candidate.")
    correct = models.BooleanField()

    class Meta:
        ordering = ["evaluation_id", "item_id"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "item"], name="questionresult_unique_item"),
        ]


class CandidateResult(models.Model):
    question = models.ForeignKey(QuestionResult, on_delete=models.CASCADE, related_name="candidates")
    candidate = models.ForeignKey("testsets.TestSetCandidate", on_delete=models.PROTECT, related_name="+")
    loss = models.FloatField(help_text="Mean token cross-entropy of the candidate given the context (nats).")
    sum_logprob = models.FloatField(null=True, blank=True, help_text="Summed token log-probability (nats).")
    n_tokens = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["question_id", "candidate_id"]
        constraints = [
            models.UniqueConstraint(fields=["question", "candidate"], name="candidateresult_unique_candidate"),
        ]
