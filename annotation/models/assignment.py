"""Who annotates what: dataset membership, per-question work slots and leased assignments."""

from django.db import models
from django.db.models import Q

DEFAULT_ERROR_LABELS = [
    "inconsistent with the context",
    "insufficient information",
    "wrong subject",
    "wrong tense",
    "other",
]


class DatasetMembership(models.Model):
    """An annotator may work on a dataset (researchers assign datasets to annotators)."""

    annotator = models.ForeignKey("annotation.Annotator", on_delete=models.CASCADE, related_name="memberships")
    dataset = models.ForeignKey("annotation.Dataset", on_delete=models.CASCADE, related_name="memberships")
    max_units = models.PositiveIntegerField(null=True, blank=True, help_text="Cap on units for this annotator")
    # the sign-up link the annotator joined through (None: added by a researcher)
    invitation = models.ForeignKey(
        "annotation.Invitation", null=True, blank=True, on_delete=models.SET_NULL, related_name="memberships"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotator", "dataset"], name="membership_unique"),
        ]


class QuestionWork(models.Model):
    """Annotation state of one question (a unit of work): how many annotators hold or have done it,
    how many it needs, and whether any of its responses is still undecided.

    A row per question keeps "next unit" one indexed, lockable lookup instead of a scan over
    assignments and scores.
    """

    question = models.OneToOneField(
        "annotation.Question", on_delete=models.CASCADE, primary_key=True, related_name="work"
    )
    dataset = models.ForeignKey("annotation.Dataset", on_delete=models.CASCADE, related_name="work")
    slots_needed = models.PositiveSmallIntegerField()
    slots_taken = models.PositiveSmallIntegerField(default=0)
    is_open = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["dataset", "is_open", "slots_taken"], name="work_next_unit")]
        constraints = [
            models.CheckConstraint(condition=Q(slots_taken__lte=models.F("slots_needed")), name="work_slots_le_needed"),
        ]


class AssignmentStatus(models.TextChoices):
    LEASED = "leased", "leased"
    SUBMITTED = "submitted", "submitted"
    EXPIRED = "expired", "expired"
    RELEASED = "released", "released (annotator blocked)"


class Assignment(models.Model):
    """One annotator's copy of a unit: the responses shown (in their shuffled order, under opaque
    keys) and the lease. Unique per question and annotator: nobody sees a unit twice."""

    question = models.ForeignKey("annotation.Question", on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey("annotation.Annotator", on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=16, choices=AssignmentStatus.choices, default=AssignmentStatus.LEASED)
    # [{"key": "r3", "candidate_id": 17}, ...] in display order; an attention check has
    # "check": true and "text" instead of a candidate. Keys reveal nothing about the ground truth.
    items = models.JSONField(default=list)
    # The utterance the attention check item shows, when the unit has one: a column rather than a
    # key inside items so that "never the same check twice to one annotator" is a constraint.
    check_utterance = models.ForeignKey(
        "annotation.Utterance", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    leased_until = models.DateTimeField()
    provider_ref = models.CharField(max_length=255, blank=True, help_text="Crowd assignment id, when any")
    check_value = models.PositiveSmallIntegerField(null=True, blank=True)
    check_passed = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["question", "annotator"], name="assignment_once_per_annotator"),
            # NULLs are distinct: units without a check do not collide.
            models.UniqueConstraint(
                fields=["annotator", "check_utterance"], name="assignment_check_once_per_annotator"
            ),
        ]
        indexes = [
            models.Index(fields=["status", "leased_until"], name="assignment_lease"),
            models.Index(fields=["annotator", "status"], name="assignment_annotator"),
            models.Index(fields=["submitted_at"], name="assignment_submitted"),
        ]


class QualitySnapshot(models.Model):
    """The expensive numbers of a dataset's dashboard (agreement with bootstrap intervals, the filter
    preview, per-annotator quality), computed by a background job so the page stays fast."""

    dataset = models.OneToOneField("annotation.Dataset", on_delete=models.CASCADE, related_name="snapshot")
    data = models.JSONField(default=dict)
    computed_at = models.DateTimeField()
