"""Frozen test sets: what was chosen, in which order, and the scores behind it.

The tables keep the names they were created with in the annotation app (testsets 0001 moved the
models here without touching their rows)."""

from django.db import models
from django.db.models import Q


class TestSet(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    dataset = models.ForeignKey("annotation.Dataset", on_delete=models.PROTECT, related_name="testsets")
    rules = models.ForeignKey("annotation.FilterRules", on_delete=models.PROTECT, related_name="testsets")
    seed = models.BigIntegerField()
    false_per_question = models.PositiveSmallIntegerField(default=3)
    # Stated on the Hugging Face card and in croissant.json. Not part of the frozen manifest: who
    # may reuse the texts can be settled after the build without changing the data.
    license = models.CharField(
        max_length=100,
        default="unknown",
        help_text="SPDX identifier (e.g. cc-by-4.0) or 'other'; 'unknown' until the texts' owners say",
    )
    # Counts, agreement, rules and the sha256 of every export format, fixed at build time.
    manifest = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_testset"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(false_per_question__gte=1), name="testset_false_ge_1"),
        ]

    def __str__(self) -> str:
        return self.name


class TestSetQuestion(models.Model):
    testset = models.ForeignKey(TestSet, on_delete=models.CASCADE, related_name="items")
    question = models.ForeignKey("annotation.Question", on_delete=models.PROTECT, related_name="+")
    position = models.PositiveIntegerField()

    class Meta:
        db_table = "annotation_testsetquestion"
        ordering = ["testset_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["testset", "position"], name="testsetquestion_unique_position"),
            models.UniqueConstraint(fields=["testset", "question"], name="testsetquestion_unique_question"),
        ]


class TestSetCandidate(models.Model):
    item = models.ForeignKey(TestSetQuestion, on_delete=models.CASCADE, related_name="candidates")
    candidate = models.ForeignKey("annotation.Candidate", on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField(help_text="0-based, shuffled with the release seed.")
    is_ground_truth = models.BooleanField(default=False)
    # Scores as they were when the test set was built ([[annotator label, value], ...]):
    # later annotation must not change a frozen test set or its exported bytes.
    scores = models.JSONField(default=list)

    class Meta:
        db_table = "annotation_testsetcandidate"
        ordering = ["item_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["item", "position"], name="testsetcandidate_unique_position"),
            models.UniqueConstraint(fields=["item", "candidate"], name="testsetcandidate_unique_candidate"),
            models.UniqueConstraint(
                fields=["item"], condition=Q(is_ground_truth=True), name="testsetcandidate_one_ground_truth"
            ),
        ]


class ShortcutAudit(models.Model):
    """A shortcut audit (testsets.shortcuts) of a dataset's pools or of a test set, as computed then:
    pages show the newest instead of recomputing it."""

    dataset = models.ForeignKey(
        "annotation.Dataset", null=True, blank=True, on_delete=models.CASCADE, related_name="shortcut_audits"
    )
    testset = models.ForeignKey(TestSet, null=True, blank=True, on_delete=models.CASCADE, related_name="audits")
    # {"questions", "candidates", "chance", "seed", "folds", "system", "baselines": [...], "above_chance": [...]}
    result = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(dataset__isnull=False, testset__isnull=True)
                | Q(dataset__isnull=True, testset__isnull=False),
                name="shortcutaudit_dataset_or_testset",
            ),
        ]
        indexes = [
            models.Index(fields=["dataset", "-created_at"], name="shortcutaudit_dataset_newest"),
            models.Index(fields=["testset", "-created_at"], name="shortcutaudit_testset_newest"),
        ]

    def __str__(self) -> str:
        return f"shortcut audit of {self.testset or self.dataset}"
