"""What generating negatives records per question: what makes the job resumable and counts
the responses that yield no negative."""

from django.db import models
from django.db.models import Q


class GenerationOutcome(models.TextChoices):
    GENERATED = "generated", "negatives generated"
    NO_WORD_SELECTED = "no_word_selected", "no word scored above the threshold"
    # every word above the threshold was punctuation, which is replaced only with --punctuation
    PUNCTUATION_ONLY = "punctuation_only", "only punctuation scored above the threshold"
    # every word above the threshold had several WordPiece tokens (ManipulationSettings.single_piece_words)
    SEVERAL_PIECES_ONLY = "several_pieces_only", "only words of several WordPiece tokens scored above the threshold"
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

# Why a question received no negative, one reason a question (the first that applies, in this
# order): field value of QuestionGeneration.without_negative -> what the summary and the workspace say.
# A question whose negatives were dropped for several reasons is counted under the first of them.
NO_NEGATIVE_REASONS = {
    "no_word_selected": "no word scored above the threshold",
    "punctuation_only": "only punctuation scored above the threshold",
    "several_pieces_only": "only words of several WordPiece tokens scored above the threshold",
    "unchanged": "every replacement was the original word again",
    "ground_truth": "its negatives were the ground truth again",
    "context": "its negatives were a context turn",
    "duplicate": "its negatives were candidates it had already (or each other)",
    "too_short": "too few words",
    "too_long": "longer than the model's input",
    "failed": "failed",
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
    # why it received none (NO_NEGATIVE_REASONS); blank when it received one
    without_negative = models.CharField(max_length=20, blank=True)
    # the response's WordPiece tokens and those of its selected words (Park et al.'s share is per token)
    tokens = models.PositiveSmallIntegerField(default=0)
    tokens_selected = models.PositiveSmallIntegerField(default=0)
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
            models.CheckConstraint(
                condition=Q(without_negative__in=["", *NO_NEGATIVE_REASONS]),
                name="questiongeneration_without_negative_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"question {self.question_id}: {self.outcome}"
