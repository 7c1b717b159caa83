"""Pair sets and contrastive pairs: a correct response and a minimally edited incorrect one to
the same context (Okano et al.). A system is correct on a pair when it gives the correct
response the lower loss."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class PairSet(models.Model):
    """Pairs built from a dataset's questions by the rules, or imported from a JSONL file."""

    name = models.SlugField(max_length=100, unique=True)
    dataset = models.ForeignKey(
        "annotation.Dataset",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="pair_sets",
        help_text="The dataset whose ground truths are the correct responses (none for an imported set).",
    )
    repository = models.ForeignKey(
        "annotation.Repository",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Repository of the bigram model and the noun vocabulary (substituted content words).",
    )
    # What the build ran with: types, criteria, per_question, seed, rule versions (pairs.services.building).
    build_settings = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=dict, blank=True, help_text="Counts of the last build or import.")
    description = models.TextField(blank=True)
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Review(models.TextChoices):
    PENDING = "pending", "pending"
    ACCEPTED = "accepted", "accepted"
    REJECTED = "rejected", "rejected"


class AnnotatorVerdict(models.TextChoices):
    NOT_SENT = "", "not sent to annotators"
    UNDECIDED = "undecided", "being scored"
    KEPT = "kept", "kept (annotators found the incorrect response inappropriate)"
    ACCEPTABLE = "acceptable", "dropped: annotators found the incorrect response acceptable"
    UNGRAMMATICAL = "ungrammatical", "dropped: annotators found the incorrect response ungrammatical"
    GROUND_TRUTH_REJECTED = "ground_truth_rejected", "dropped: annotators rejected the correct response"


class Pair(models.Model):
    """One contrastive pair. ``correct[correct_start:correct_end]`` became
    ``incorrect[incorrect_start:incorrect_end]``; the texts outside the spans are the same."""

    pair_set = models.ForeignKey(PairSet, on_delete=models.CASCADE, related_name="pairs")
    question = models.ForeignKey(
        "annotation.Question", null=True, blank=True, on_delete=models.SET_NULL, related_name="contrastive_pairs"
    )
    # The pair's own copy of the context: an imported pair has no question, and a pair set stays
    # the same when the dataset changes.
    context = models.JSONField(help_text="The turns before the response, oldest first.")
    correct = models.TextField()
    incorrect = models.TextField()
    generated_incorrect = models.TextField(blank=True, help_text="The rule's text, kept when a reviewer edits it.")
    type = models.SlugField(max_length=40, help_text="content, sentence, function, or an imported type.")
    subtype = models.SlugField(max_length=60, blank=True)
    criterion = models.SlugField(max_length=20, blank=True, help_text="el or ml (substituted content words).")
    correct_start = models.PositiveIntegerField()
    correct_end = models.PositiveIntegerField()
    incorrect_start = models.PositiveIntegerField()
    incorrect_end = models.PositiveIntegerField()
    provenance = models.JSONField(default=dict, blank=True)
    key = models.CharField(max_length=64, help_text="Digest of the context and both responses.")
    review = models.CharField(max_length=10, choices=Review.choices, default=Review.PENDING)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    candidate = models.ForeignKey(
        "annotation.Candidate",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="contrastive_pairs",
        help_text="The incorrect response as a candidate of the question, when sent to annotators.",
    )
    annotator_verdict = models.CharField(max_length=24, choices=AnnotatorVerdict.choices, default="", blank=True)
    source_line = models.PositiveIntegerField(null=True, blank=True, help_text="Line of the imported file.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pair_set_id", "id"]
        indexes = [models.Index(fields=["pair_set", "review", "type"], name="pair_set_review_type")]
        constraints = [
            models.UniqueConstraint(fields=["pair_set", "key"], name="pair_unique_per_set"),
            models.CheckConstraint(condition=Q(review__in=[r.value for r in Review]), name="pair_review_valid"),
            models.CheckConstraint(
                condition=Q(annotator_verdict__in=[v.value for v in AnnotatorVerdict]), name="pair_verdict_valid"
            ),
            models.CheckConstraint(condition=~Q(correct=F("incorrect")), name="pair_responses_differ"),
            models.CheckConstraint(condition=~Q(type=""), name="pair_type_not_empty"),
            models.CheckConstraint(
                condition=Q(correct_start__lte=F("correct_end")) & Q(incorrect_start__lte=F("incorrect_end")),
                name="pair_spans_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.type}: {self.incorrect[:60]}"

    @property
    def edited(self) -> bool:
        return bool(self.generated_incorrect) and self.generated_incorrect != self.incorrect


class QuestionBuild(models.Model):
    """A question's outcome per rule in a build: what makes the build resumable, and the skip
    counts (``{"content": "generated", "sentence": "wh_question", ...}``)."""

    pair_set = models.ForeignKey(PairSet, on_delete=models.CASCADE, related_name="question_builds")
    question = models.ForeignKey("annotation.Question", on_delete=models.CASCADE, related_name="+")
    outcomes = models.JSONField(default=dict)
    pairs_added = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["pair_set_id", "question_id"]
        constraints = [
            models.UniqueConstraint(fields=["pair_set", "question"], name="questionbuild_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.pair_set_id}/{self.question_id}"
