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

from .generation import Generation


class Campaign(models.Model):
    """Which systems to rank, on which test set, against which human ratings; the report is its page."""

    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    # CHOSEN: the test set built with well-chosen false candidates (optional: an imported campaign of
    # external systems has only the human and reference-based parts).
    testset = models.ForeignKey(
        "testsets.TestSet", null=True, blank=True, on_delete=models.PROTECT, related_name="campaigns"
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
