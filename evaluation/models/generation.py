"""A system's responses to a dataset's contexts: generated here (the ``generate`` job) or imported
with their human ratings (Zhao et al. 2020)."""

from django.db import models
from django.db.models import Q

from .system_run import SystemRun


class DecodingStrategy(models.TextChoices):
    GREEDY = "greedy", "greedy"
    NUCLEUS = "nucleus", "nucleus sampling (top-p)"
    IMPORTED = "imported", "imported responses"


class Generation(SystemRun):
    """One response per context from a system: generated for a dataset's questions, or imported."""

    system = models.ForeignKey("evaluation.System", on_delete=models.PROTECT, related_name="generations")
    # The dataset whose questions (context + ground truth as reference) were answered; null for imports.
    dataset = models.ForeignKey(
        "annotation.Dataset", null=True, blank=True, on_delete=models.PROTECT, related_name="generations"
    )
    source_file = models.CharField(max_length=1000, blank=True, help_text="File the responses were imported from.")
    strategy = models.CharField(max_length=16, choices=DecodingStrategy.choices, default=DecodingStrategy.GREEDY)
    top_p = models.FloatField(default=0.9, help_text="Nucleus sampling: smallest token set with this probability.")
    temperature = models.FloatField(default=1.0)
    max_new_tokens = models.PositiveSmallIntegerField(default=40)
    seed = models.BigIntegerField(default=0, help_text="Sampling seed (nucleus): the same seed, the same responses.")

    class Meta(SystemRun.Meta):
        constraints = [
            *SystemRun.Meta.constraints,
            models.UniqueConstraint(
                fields=["system", "dataset"],
                condition=Q(dataset__isnull=False),
                name="generation_unique_system_dataset",
            ),
            models.UniqueConstraint(
                fields=["system", "source_file"], condition=Q(dataset__isnull=True), name="generation_unique_import"
            ),
            models.CheckConstraint(
                condition=Q(dataset__isnull=False) | ~Q(source_file=""), name="generation_dataset_or_file"
            ),
            models.CheckConstraint(
                condition=Q(strategy__in=[s.value for s in DecodingStrategy]), name="generation_strategy_valid"
            ),
            models.CheckConstraint(condition=Q(top_p__gt=0) & Q(top_p__lte=1), name="generation_top_p_0_1"),
            models.CheckConstraint(condition=Q(temperature__gt=0), name="generation_temperature_gt_0"),
            models.CheckConstraint(condition=Q(max_new_tokens__gte=1), name="generation_max_new_tokens_ge_1"),
        ]

    def __str__(self) -> str:
        return f"{self.system} on {self.dataset or self.source_file} ({self.strategy})"


class GeneratedResponse(models.Model):
    """A system's response to one context, with the reference(s) it is compared against."""

    generation = models.ForeignKey(Generation, on_delete=models.CASCADE, related_name="responses")
    question = models.ForeignKey(
        "annotation.Question", null=True, blank=True, on_delete=models.PROTECT, related_name="generated_responses"
    )
    # The same context across systems: "q<question id>" when generated here, the file's dialogue_id
    # when imported. Rankings compare systems on the contexts they share.
    context_key = models.CharField(max_length=255)
    context = models.JSONField(default=list, help_text="Context turns, oldest first.")
    references = models.JSONField(default=list, help_text="Reference responses (the ground truth).")
    text = models.TextField()
    n_tokens = models.PositiveIntegerField(null=True, blank=True)
    # Set when the response is sent to annotators ("rate this response 1-5"): their Scores hang on it.
    # Systems that said the same thing to the same context share one candidate (one text per question).
    candidate = models.ForeignKey(
        "annotation.Candidate", null=True, blank=True, on_delete=models.SET_NULL, related_name="generated_responses"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["generation_id", "context_key"]
        constraints = [
            models.UniqueConstraint(fields=["generation", "context_key"], name="generatedresponse_unique_context"),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class ResponseRating(models.Model):
    """An imported human rating of a generated response (e.g. Zhao et al. 2020, 1-5).

    Ratings collected in this app are annotation Scores on ``response.candidate`` instead.
    ``annotator_key`` is the annotator's position in the file (the split-half bound splits on it).
    """

    response = models.ForeignKey(GeneratedResponse, on_delete=models.CASCADE, related_name="ratings")
    aspect = models.CharField(max_length=40, default="appropriateness")
    annotator_key = models.CharField(max_length=100)
    value = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["response_id", "aspect", "annotator_key"]
        constraints = [
            models.UniqueConstraint(fields=["response", "aspect", "annotator_key"], name="responserating_unique"),
            models.CheckConstraint(condition=Q(value__gte=1) & Q(value__lte=5), name="responserating_value_1_5"),
        ]
