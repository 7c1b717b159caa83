"""Evaluation campaigns: systems ranked by humans, by selection accuracy and by baselines.

A campaign (Sato et al. 2020, §4) puts side by side, for a set of systems:

* their CHOSEN accuracy: an :class:`~evaluation.models.Evaluation` of each system on the campaign's
  test set (``testset``);
* their RANDOM accuracies: the same questions with the false candidates resampled from a repository,
  ``random_trials`` seeded trials (:class:`RandomTrialResult`, one row per system and trial);
* their correctness on contrastive pairs (optional ``pair_set``): a
  :class:`~evaluation.models.PairEvaluation` of each system;
* their human score and reference-based metrics (BLEU, METEOR, ROUGE-L), both from one
  :class:`Generation` per system: the responses it generated for a dataset's contexts (the
  ``generate`` job) or imported with their ratings (Zhao et al. 2020). Human ratings are
  :class:`ResponseRating` rows when imported, or annotation ``Score`` rows on the response's
  ``candidate`` when collected with the "rate this response 1–5" task.
"""

from django.db import models
from django.db.models import Q

from .system import SYSTEM_REVISION_HELP, EvaluationStatus


class DecodingStrategy(models.TextChoices):
    GREEDY = "greedy", "greedy"
    NUCLEUS = "nucleus", "nucleus sampling (top-p)"
    IMPORTED = "imported", "imported responses"


class Generation(models.Model):
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
    status = models.CharField(max_length=16, choices=EvaluationStatus.choices, default=EvaluationStatus.PENDING)
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The system's updated_at when responses were first written: a changed system needs new responses.
    system_version = models.DateTimeField(null=True, blank=True)
    system_revision = models.CharField(max_length=200, blank=True, help_text=SYSTEM_REVISION_HELP)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
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
                condition=Q(status__in=[s.value for s in EvaluationStatus]), name="generation_status_valid"
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


class Campaign(models.Model):
    """Which systems to rank, on which test set, against which human ratings; the report is its page."""

    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    # CHOSEN: the test set built with well-chosen false candidates (optional: an imported campaign of
    # external systems has only the human and reference-based parts).
    testset = models.ForeignKey(
        "annotation.TestSet", null=True, blank=True, on_delete=models.PROTECT, related_name="campaigns"
    )
    systems = models.ManyToManyField("evaluation.System", blank=True, related_name="campaigns")
    # One generation per system: its responses carry the human ratings and the reference-based metrics.
    generations = models.ManyToManyField(Generation, blank=True, related_name="campaigns")
    # RANDOM: false candidates drawn uniformly from this repository, random_trials seeded trials.
    repository = models.ForeignKey(
        "annotation.Repository", null=True, blank=True, on_delete=models.PROTECT, related_name="campaigns"
    )
    random_trials = models.PositiveSmallIntegerField(default=100)
    # Contrastive pairs: each system's correctness on the set's accepted pairs is one more ranking.
    pair_set = models.ForeignKey(
        "pairs.PairSet",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="campaigns",
        help_text="Contrastive pairs whose correctness ranks the local systems too (optional).",
    )
    seed = models.BigIntegerField(default=0)
    bootstrap_resamples = models.PositiveIntegerField(default=1000)
    human_aspect = models.CharField(max_length=40, default="appropriateness")
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The last computed report (JSON), so the page does not recompute bootstraps per request.
    report = models.JSONField(default=dict, blank=True)
    report_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(bootstrap_resamples__gte=0), name="campaign_resamples_ge_0"),
        ]

    def __str__(self) -> str:
        return self.name


class RandomTrialResult(models.Model):
    """One system on one RANDOM trial of a campaign: the CHOSEN questions, false candidates resampled."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="random_results")
    system = models.ForeignKey("evaluation.System", on_delete=models.CASCADE, related_name="+")
    trial = models.PositiveIntegerField()
    questions = models.PositiveIntegerField()
    correct = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign_id", "system_id", "trial"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "system", "trial"], name="randomtrialresult_unique"),
            models.CheckConstraint(condition=Q(correct__lte=models.F("questions")), name="randomtrial_correct_le_n"),
        ]

    @property
    def accuracy(self) -> float:
        return self.correct / self.questions if self.questions else float("nan")
