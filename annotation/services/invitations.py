"""Researchers bring annotators in: an account made for them, or a link they sign up with."""

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Annotator, AnnotatorProvider, Dataset, DatasetMembership, Invitation
from core.errors import UserError

# A sign-up link's defaults and bounds: the researcher sets both limits when making one.
INVITE_DAYS = 14
INVITE_MAX_DAYS = 90
INVITE_MAX_USES = 10
INVITE_MAX_USES_CAP = 10_000
# A floor that holds whatever AUTH_PASSWORD_VALIDATORS a deployment configures (they run too).
MIN_PASSWORD_LENGTH = 8
# An annotator's cap on units: no dataset comes near it, and it fits the database's integer.
MAX_UNITS_CAP = 1_000_000
CREDENTIALS_RULE = f"Choose a user name and a password of at least {MIN_PASSWORD_LENGTH} characters."


def max_units_check(*, max_units: int | None) -> int | None:
    """An annotator's cap on units: a whole number from 1 to MAX_UNITS_CAP, or None for no cap."""
    if max_units is not None and (
        isinstance(max_units, bool) or not isinstance(max_units, int) or not 1 <= max_units <= MAX_UNITS_CAP
    ):
        raise UserError(f"the cap must be a whole number of units from 1 to {MAX_UNITS_CAP}, or empty for none")
    return max_units


def membership_ensure(
    *, user, dataset: Dataset, max_units: int | None = None, invitation: Invitation | None = None
) -> Annotator:
    max_units_check(max_units=max_units)
    annotator, _ = Annotator.objects.get_or_create(
        user=user,
        defaults={
            "provider": AnnotatorProvider.INTERNAL,
            "external_id": user.get_username(),
            "display_name": user.get_username(),
        },
    )
    membership, created = DatasetMembership.objects.get_or_create(
        annotator=annotator, dataset=dataset, defaults={"max_units": max_units, "invitation": invitation}
    )
    if not created and max_units is not None and membership.max_units != max_units:
        DatasetMembership.objects.filter(pk=membership.pk).update(max_units=max_units)
    return annotator


def username_check(*, username: str) -> str:
    """The user name without surrounding spaces; a UserError when it is empty or breaks a rule of
    the user model's own (its validators: allowed characters, length)."""
    username = username.strip()
    if not username:
        raise UserError("Give a user name.")
    user_model = get_user_model()
    try:
        user_model._meta.get_field(user_model.USERNAME_FIELD).run_validators(username)
    except ValidationError as exc:
        raise UserError(" ".join(exc.messages)) from None
    return username


def invite_credentials_check(*, username: str, password: str) -> str:
    """The user name a person signing up with an invitation link chose, checked with their password:
    a user name and at least MIN_PASSWORD_LENGTH characters, then the configured password
    validators (AUTH_PASSWORD_VALIDATORS: common, numeric, too similar to the user name)."""
    if not username.strip() or len(password) < MIN_PASSWORD_LENGTH:
        raise UserError(CREDENTIALS_RULE)
    username = username_check(username=username)
    user_model = get_user_model()
    try:
        validate_password(password, user=user_model(**{user_model.USERNAME_FIELD: username}))
    except ValidationError as exc:
        raise UserError(" ".join(exc.messages)) from None
    return username


def annotator_invite_account(*, dataset: Dataset, username: str, max_units: int | None = None) -> tuple[object, str]:
    """A new account for an annotator (or an existing one added to the dataset). Returns the user and
    a password to hand over, empty when the account existed already."""
    username = username_check(username=username)
    users = get_user_model().objects
    with transaction.atomic():
        user = users.filter(username=username).first()
        password = ""
        if user is None:
            password = secrets.token_urlsafe(9)
            user = users.create_user(username=username, password=password)
        membership_ensure(user=user, dataset=dataset, max_units=max_units)
    return user, password


def invitation_create(
    *,
    dataset: Dataset,
    max_uses: int = INVITE_MAX_USES,
    days: int = INVITE_DAYS,
    max_units: int | None = None,
    label: str = "",
    created_by=None,
) -> tuple[Invitation, str]:
    """A sign-up link for ``dataset`` that makes at most ``max_uses`` accounts within ``days`` days.
    Returns the invitation and its token: the token is not stored (its SHA-256 is), so the link is
    shown once."""
    invitation_limits_check(max_uses=max_uses, days=days)
    max_units_check(max_units=max_units)
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        dataset=dataset,
        token_sha256=_token_hash(token),
        label=label.strip()[:200],
        max_uses=max_uses,
        max_units=max_units,
        expires_at=timezone.now() + timedelta(days=days),
        created_by=created_by,
    )
    return invitation, token


def invitation_limits_check(*, max_uses: int, days: int) -> None:
    if isinstance(max_uses, bool) or not isinstance(max_uses, int) or not 1 <= max_uses <= INVITE_MAX_USES_CAP:
        raise UserError(f"a link makes from 1 to {INVITE_MAX_USES_CAP:,} accounts")
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= INVITE_MAX_DAYS:
        raise UserError(f"a link is valid for 1 to {INVITE_MAX_DAYS} days")


def invitation_revoke(*, invitation: Invitation) -> None:
    """The link makes no more accounts; those it made stay members."""
    Invitation.objects.filter(pk=invitation.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


def invite_dataset(*, token: str) -> Dataset:
    """The dataset of a sign-up link that can still make an account; a UserError otherwise."""
    return _usable(Invitation.objects.select_related("dataset"), token).dataset


def invite_accept(*, token: str, username: str, password: str):
    """A new account from an invitation link, a member of the link's dataset through it; a UserError
    when the link is not valid, expired, withdrawn or used up, or the credentials break a rule
    (invite_credentials_check). The link's row is locked, so that two sign-ups never pass its limit
    and the second one is told so."""
    _usable(Invitation.objects.all(), token)  # a clear message before the credentials are checked
    username = invite_credentials_check(username=username, password=password)
    users = get_user_model().objects
    with transaction.atomic():
        invitation = _usable(Invitation.objects.select_for_update().select_related("dataset"), token)
        if users.filter(username=username).exists():
            raise UserError("that user name is taken; choose another one")
        user = users.create_user(username=username, password=password)
        membership_ensure(user=user, dataset=invitation.dataset, max_units=invitation.max_units, invitation=invitation)
        Invitation.objects.filter(pk=invitation.pk).update(uses=F("uses") + 1)
    return user


def _usable(invitations, token: str) -> Invitation:
    invitation = invitations.filter(token_sha256=_token_hash(token)).first() if token else None
    if invitation is None:
        raise UserError("this invitation link is not valid")
    if invitation.revoked_at is not None:
        raise UserError("this invitation link was withdrawn; ask for a new link")
    if invitation.expires_at <= timezone.now():
        raise UserError("this invitation has expired; ask for a new link")
    if invitation.uses >= invitation.max_uses:
        raise UserError("this invitation link has been used as often as it may; ask for a new link")
    return invitation


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
