"""Sign-up links for annotators: each with a use limit and an expiry the researcher sets."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class Invitation(models.Model):
    """A sign-up link to a dataset. The link carries a random token; only its SHA-256 is stored, so
    the link is shown once, when it is made. Each account made through it is a membership that
    names it, so the dataset's page lists who joined through which link."""

    dataset = models.ForeignKey("annotation.Dataset", on_delete=models.CASCADE, related_name="invitations")
    token_sha256 = models.CharField(max_length=64, unique=True, editable=False)
    label = models.CharField(max_length=200, blank=True, help_text="Whom the link was given to, for the researcher")
    max_uses = models.PositiveIntegerField(help_text="Accounts the link may make")
    uses = models.PositiveIntegerField(default=0, editable=False)
    max_units = models.PositiveIntegerField(
        null=True, blank=True, help_text="Cap on units for each annotator who joins through the link"
    )
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(max_uses__gte=1), name="invitation_max_uses_ge_1"),
            models.CheckConstraint(condition=Q(uses__lte=F("max_uses")), name="invitation_uses_within_limit"),
        ]

    def __str__(self) -> str:
        return f"invitation {self.pk} to {self.dataset_id}" + (f" ({self.label})" if self.label else "")
