"""Crowd work: a batch of units published on a provider (MTurk, Prolific, a link), one task (HIT)
per unit, and the provider's assignments imported exactly once.

Money never moves twice: every creating or paying call carries a token derived from these rows'
ids, and the rows record what the provider answered.

The tables keep the names the annotation app gave them (annotation_crowd*) when crowd work was
part of it: the crowd app took the models over by state-only migrations.
"""

import secrets

from django.db import models
from django.db.models import Q


class CrowdProvider(models.TextChoices):
    INTERNAL = "internal", "internal accounts"
    MTURK = "mturk", "Amazon Mechanical Turk"
    PROLIFIC = "prolific", "Prolific"
    LINK = "link", "signed link (any platform)"


class CrowdBatchStatus(models.TextChoices):
    DRAFT = "draft", "draft"
    PUBLISHED = "published", "published"
    EXPIRED = "expired", "expired (no new workers)"
    CLOSED = "closed", "closed"


def _new_token() -> str:
    return secrets.token_hex(12)


class CrowdBatch(models.Model):
    """Units of one dataset offered on one provider, with the provider's settings (reward, title,
    qualifications...). Credentials are never stored here: they come from the environment."""

    STATUSES = [s.value for s in CrowdBatchStatus]

    dataset = models.ForeignKey("annotation.Dataset", on_delete=models.PROTECT, related_name="crowd_batches")
    name = models.CharField(max_length=100)
    provider = models.CharField(max_length=16, choices=CrowdProvider.choices)
    status = models.CharField(max_length=16, choices=CrowdBatchStatus.choices, default=CrowdBatchStatus.DRAFT)
    settings = models.JSONField(default=dict, blank=True, help_text="Provider settings (see the README)")
    max_units = models.PositiveIntegerField(null=True, blank=True, help_text="Publish at most this many units")
    production = models.BooleanField(
        default=False, help_text="Real money: the production endpoint instead of the sandbox (MTurk)"
    )
    external_id = models.CharField(max_length=255, blank=True, help_text="HIT type id / study id on the provider")
    token = models.CharField(max_length=32, unique=True, default=_new_token, editable=False)
    completion_code = models.CharField(max_length=32, blank=True, help_text="Shown to link/Prolific workers at the end")
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    synced_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotation_crowdbatch"
        ordering = ["-created_at"]
        verbose_name_plural = "crowd batches"
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="crowdbatch_unique_name"),
            models.CheckConstraint(
                condition=Q(provider__in=[p.value for p in CrowdProvider]), name="crowdbatch_provider_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in CrowdBatchStatus]), name="crowdbatch_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.provider}, {self.status})"


class CrowdTaskStatus(models.TextChoices):
    PENDING = "pending", "not yet published"
    PUBLISHED = "published", "published"
    EXPIRED = "expired", "expired"
    DELETED = "deleted", "deleted on the provider"


class CrowdTask(models.Model):
    """One unit (question) of a batch on the provider: an MTurk HIT with MaxAssignments = K."""

    batch = models.ForeignKey(CrowdBatch, on_delete=models.CASCADE, related_name="tasks")
    question = models.ForeignKey("annotation.Question", on_delete=models.PROTECT, related_name="crowd_tasks")
    provider = models.CharField(max_length=16, choices=CrowdProvider.choices)
    external_id = models.CharField(max_length=255, blank=True, help_text="HIT id")
    token = models.CharField(max_length=32, unique=True, default=_new_token, editable=False)
    status = models.CharField(max_length=16, choices=CrowdTaskStatus.choices, default=CrowdTaskStatus.PENDING)
    max_assignments = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotation_crowdtask"
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "question"], name="crowdtask_once_per_batch"),
            models.UniqueConstraint(
                fields=["provider", "external_id"], condition=~Q(external_id=""), name="crowdtask_unique_external_id"
            ),
            models.CheckConstraint(condition=Q(max_assignments__gte=1), name="crowdtask_max_assignments_ge_1"),
        ]
        indexes = [models.Index(fields=["batch", "status"], name="crowdtask_batch_status")]

    def __str__(self) -> str:
        return self.external_id or f"task {self.pk}"


class CrowdAssignmentStatus(models.TextChoices):
    ACCEPTED = "accepted", "accepted (working)"
    SUBMITTED = "submitted", "submitted"
    APPROVED = "approved", "approved"
    REJECTED = "rejected", "rejected"
    RETURNED = "returned", "returned / abandoned"
    DISCARDED = "discarded", "discarded (the platform never confirmed it)"


class CrowdAssignment(models.Model):
    """A worker's assignment on the provider (MTurk AssignmentId, Prolific submission id, a link
    session). Unique per provider: importing it again finds this row."""

    provider = models.CharField(max_length=16, choices=CrowdProvider.choices)
    external_id = models.CharField(max_length=255)
    batch = models.ForeignKey(CrowdBatch, on_delete=models.CASCADE, related_name="assignments")
    task = models.ForeignKey(CrowdTask, null=True, blank=True, on_delete=models.CASCADE, related_name="assignments")
    worker = models.ForeignKey("annotation.Annotator", on_delete=models.PROTECT, related_name="crowd_assignments")
    assignment = models.OneToOneField(
        "annotation.Assignment",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="crowd",
        help_text="Our unit (and its scores)",
    )
    status = models.CharField(
        max_length=16, choices=CrowdAssignmentStatus.choices, default=CrowdAssignmentStatus.ACCEPTED
    )
    external_status = models.CharField(max_length=32, blank=True, help_text="Status as the provider last said")
    submit_to = models.URLField(blank=True, help_text="MTurk turkSubmitTo (validated against the allow-list)")
    answer = models.JSONField(default=dict, blank=True, help_text="What the provider returned with the submission")
    imported_at = models.DateTimeField(null=True, blank=True, help_text="When sync first saw it submitted")
    submitted_at = models.DateTimeField(null=True, blank=True)
    auto_approval_at = models.DateTimeField(null=True, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    feedback = models.CharField(max_length=1024, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_crowdassignment"
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "external_id"], name="crowdassignment_unique_external_id"),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in CrowdAssignmentStatus]), name="crowdassignment_status_valid"
            ),
        ]
        indexes = [models.Index(fields=["batch", "status"], name="crowdassignment_batch_status")]

    def __str__(self) -> str:
        return f"{self.provider}:{self.external_id}"


class CrowdBonusStatus(models.TextChoices):
    PENDING = "pending", "pending"
    PAID = "paid", "paid"


class CrowdBonus(models.Model):
    """A bonus to a worker for an assignment. Recorded before the call; its token makes a retried
    call pay once."""

    crowd_assignment = models.ForeignKey(CrowdAssignment, on_delete=models.PROTECT, related_name="bonuses")
    purpose = models.SlugField(max_length=40, default="bonus", help_text="One bonus per assignment and purpose")
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    reason = models.CharField(max_length=1024)
    token = models.CharField(max_length=64, unique=True)
    # The provider's own id of the payment where it has one to set up before paying (Prolific's
    # bulk bonus): kept before the money moves, so a retry pays that one instead of a new one.
    external_ref = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=16, choices=CrowdBonusStatus.choices, default=CrowdBonusStatus.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotation_crowdbonus"
        ordering = ["id"]
        verbose_name_plural = "crowd bonuses"
        constraints = [
            models.UniqueConstraint(fields=["crowd_assignment", "purpose"], name="crowdbonus_once_per_purpose"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="crowdbonus_amount_positive"),
        ]


class CrowdLinkEntry(models.Model):
    """Where a worker first came into a batch by its link: a keyed hash of their network address
    (the address itself is not kept) and, from Prolific, the session. The per-address limits
    (crowd.services.work) count these: how many new worker ids one address brought lately and how
    many places their unconfirmed work holds."""

    batch = models.ForeignKey(CrowdBatch, on_delete=models.CASCADE, related_name="link_entries")
    worker = models.ForeignKey("annotation.Annotator", on_delete=models.CASCADE, related_name="crowd_link_entries")
    address = models.CharField(max_length=64, help_text="HMAC-SHA256 of the network address (an IPv6 /64)")
    session = models.CharField(max_length=64, blank=True, help_text="Prolific's SESSION_ID")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "worker"], name="crowdlinkentry_once_per_worker"),
        ]
        indexes = [models.Index(fields=["batch", "address", "created_at"], name="crowdlinkentry_address")]

    def __str__(self) -> str:
        return f"{self.worker_id} in batch {self.batch_id}"
