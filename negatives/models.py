"""What generating negatives records per question: what makes the job resumable and counts
the responses that yield no negative."""

from django.db import models
from django.db.models import Q


class GenerationOutcome(models.TextChoices):
    GENERATED = "generated", "negatives generated"
    NO_WORD_SELECTED = "no_word_selected", "no word scored above the threshold"
    TOO_SHORT = "too_short", "too few words"
    TOO_LONG = "too_long", "longer than the model's input"
    FAILED = "failed", "failed"


# Why a negative the masked LM made is not added (texts compared after normalisation, core.text):
# field of QuestionGeneration -> what the job's summary and the workspace say.
DROP_REASONS = {
    "dropped_existing": "the same as a candidate the question has (a pool candidate or an earlier negative)",
    "dropped_ground_truth": "the same as the ground truth",
    "dropped_context": "the same as a context turn",
    "dropped_repeated": "the same as another negative of the same response",
}


class QuestionGeneration(models.Model):
    """A question's outcome under one setup (model version and settings). A finished question is
    skipped when the same setup runs again; another setup adds its own negatives."""

    question = models.ForeignKey("annotation.Question", on_delete=models.CASCADE, related_name="generations")
    setup = models.CharField(max_length=64, help_text="Digest of the model version and the settings")
    outcome = models.CharField(max_length=20, choices=GenerationOutcome.choices)
    words = models.PositiveSmallIntegerField(default=0)
    selected = models.PositiveSmallIntegerField(default=0)
    negatives_added = models.PositiveSmallIntegerField(default=0)
    # negatives made but not added, by why (DROP_REASONS): each would have repeated a text
    dropped_ground_truth = models.PositiveSmallIntegerField(default=0)
    dropped_context = models.PositiveSmallIntegerField(default=0)
    dropped_repeated = models.PositiveSmallIntegerField(default=0)
    dropped_existing = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["question_id"]
        constraints = [
            models.UniqueConstraint(fields=["question", "setup"], name="questiongeneration_unique_setup"),
            models.CheckConstraint(
                condition=Q(outcome__in=[o.value for o in GenerationOutcome]), name="questiongeneration_outcome_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"question {self.question_id}: {self.outcome}"
