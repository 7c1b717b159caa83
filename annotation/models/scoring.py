"""Who scores, the scores they give, and the thresholds that turn scores into decisions."""

from django.conf import settings
from django.db import models
from django.db.models import Q


class AnnotatorProvider(models.TextChoices):
    INTERNAL = "internal", "internal account"
    IMPORTED = "imported", "imported scores"
    MTURK = "mturk", "Amazon Mechanical Turk"
    PROLIFIC = "prolific", "Prolific"
    LINK = "link", "link-based crowd"


class Annotator(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="annotator"
    )
    provider = models.CharField(max_length=16, choices=AnnotatorProvider.choices)
    external_id = models.CharField(max_length=255, help_text="Worker id on the provider; the username for internal.")
    display_name = models.CharField(max_length=255, blank=True)
    is_blocked = models.BooleanField(default=False)
    # Blocking stops new work; excluding also drops this annotator's scores from filtering.
    scores_excluded = models.BooleanField(default=False)
    # The dataset the annotator chose to work on (None: any of theirs). On the account rather than
    # in a session, so that the choice holds on every device they sign in from.
    chosen_dataset = models.ForeignKey(
        "annotation.Dataset", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["provider", "external_id"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "external_id"], name="annotator_unique_external_id"),
            models.CheckConstraint(
                condition=~Q(provider="internal") | Q(user__isnull=False), name="annotator_internal_has_user"
            ),
            models.CheckConstraint(
                condition=Q(provider__in=[p.value for p in AnnotatorProvider]), name="annotator_provider_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.display_name or f"{self.provider}:{self.external_id}"


def counted_scores_q(prefix: str = "") -> Q:
    """The scores that count as evidence (filtering, adaptive stopping, agreement, test sets):
    confirmed ones of annotators whose scores are not excluded. ``prefix`` reaches them through a
    relation, e.g. ``"scores__"`` from a candidate."""
    return Q(**{f"{prefix}counted": True, f"{prefix}annotator__scores_excluded": False})


class ScoreQuerySet(models.QuerySet):
    def counted(self) -> "ScoreQuerySet":
        return self.filter(counted_scores_q())


class Score(models.Model):
    MIN_VALUE = 0
    MAX_VALUE = 5

    objects = ScoreQuerySet.as_manager()

    # No single-column indexes on these two: score_one_per_annotator (candidate, annotator) and
    # score_annotator_time (annotator, created_at) serve their lookups, and every index costs each
    # of the millions of rows an import writes.
    candidate = models.ForeignKey(
        "annotation.Candidate", on_delete=models.CASCADE, related_name="scores", db_index=False
    )
    annotator = models.ForeignKey(Annotator, on_delete=models.PROTECT, related_name="scores", db_index=False)
    value = models.PositiveSmallIntegerField()
    assignment_ref = models.CharField(
        max_length=255, blank=True, help_text="Provider assignment (e.g. MTurk AssignmentId) the score came with."
    )
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    assignment = models.ForeignKey(
        "annotation.Assignment",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="scores",
        db_index=False,  # score_assignment: a partial index, since imported scores have none
    )
    labels = models.JSONField(default=list, blank=True, help_text='"Why is it wrong" labels for scores <= 2')
    # A crowd worker's score counts only once the platform has confirmed their assignment (the
    # crowd app's sync decides): until then it is stored and shown, never evidence.
    counted = models.BooleanField(
        default=True, help_text="Counts as evidence; a crowd score waits for the platform's confirmation"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["candidate_id", "annotator_id"]
        constraints = [
            models.UniqueConstraint(fields=["candidate", "annotator"], name="score_one_per_annotator"),
            models.CheckConstraint(condition=Q(value__gte=0) & Q(value__lte=5), name="score_value_0_5"),
        ]
        indexes = [
            models.Index(fields=["annotator", "created_at"], name="score_annotator_time"),
            models.Index(fields=["assignment"], condition=Q(assignment__isnull=False), name="score_assignment"),
        ]

    def __str__(self) -> str:
        return f"{self.value} by {self.annotator_id} on {self.candidate_id}"


class ScoreRevision(models.Model):
    """A score as it was before its annotator corrected it, kept for audit: only the Score row it
    belongs to counts (one per annotator and candidate), never a revision."""

    score = models.ForeignKey(Score, on_delete=models.CASCADE, related_name="revisions")
    value = models.PositiveSmallIntegerField()
    labels = models.JSONField(default=list, blank=True)
    replaced_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["score_id", "replaced_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(value__gte=0) & Q(value__lte=5), name="scorerevision_value_0_5"),
        ]

    def __str__(self) -> str:
        return f"{self.value} before a correction of score {self.score_id}"


class FilterRules(models.Model):
    """One immutable version of the thresholds of Sato et al. §3.1.

    A false candidate is dropped as *acceptable* when at least ``acceptable_min_count``
    annotators gave it ``acceptable_min_score`` or more, and as *ungrammatical* when at least
    ``ungrammatical_min_count`` gave it ``ungrammatical_max_score`` or less. A question is
    dropped when at least ``ground_truth_low_min_count`` annotators gave its ground truth
    ``ground_truth_low_max_score`` or less.
    """

    version = models.PositiveIntegerField(unique=True)
    acceptable_min_score = models.PositiveSmallIntegerField(default=3)
    acceptable_min_count = models.PositiveSmallIntegerField(default=3)
    ungrammatical_max_score = models.PositiveSmallIntegerField(default=0)
    ungrammatical_min_count = models.PositiveSmallIntegerField(default=3)
    ground_truth_low_max_score = models.PositiveSmallIntegerField(default=3)
    ground_truth_low_min_count = models.PositiveSmallIntegerField(default=3)
    note = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    THRESHOLD_FIELDS = (
        "acceptable_min_score",
        "acceptable_min_count",
        "ungrammatical_max_score",
        "ungrammatical_min_count",
        "ground_truth_low_max_score",
        "ground_truth_low_min_count",
    )

    class Meta:
        ordering = ["-version"]
        verbose_name_plural = "filter rules"
        constraints = [
            models.CheckConstraint(
                condition=Q(acceptable_min_score__lte=5)
                & Q(ungrammatical_max_score__lte=5)
                & Q(ground_truth_low_max_score__lte=5),
                name="filterrules_scores_0_5",
            ),
            models.CheckConstraint(
                condition=Q(acceptable_min_count__gte=1)
                & Q(ungrammatical_min_count__gte=1)
                & Q(ground_truth_low_min_count__gte=1),
                name="filterrules_counts_ge_1",
            ),
        ]

    def thresholds(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.THRESHOLD_FIELDS}

    def __str__(self) -> str:
        return f"rules v{self.version}"
