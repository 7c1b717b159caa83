"""Researchers bring annotators in: an account made for them, or a link they sign up with."""

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core import signing
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import Annotator, AnnotatorProvider, Dataset, DatasetMembership
from core.errors import UserError

INVITE_SALT = "wellchosen.invite"
INVITE_DAYS = 14
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


def membership_ensure(*, user, dataset: Dataset, max_units: int | None = None) -> Annotator:
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
        annotator=annotator, dataset=dataset, defaults={"max_units": max_units}
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


def invite_link_token(*, dataset: Dataset) -> str:
    return signing.dumps({"dataset": dataset.pk}, salt=INVITE_SALT, compress=True)


def invite_dataset(*, token: str) -> Dataset:
    try:
        payload = signing.loads(token, salt=INVITE_SALT, max_age=INVITE_DAYS * 24 * 3600)
    except signing.SignatureExpired:
        raise UserError("this invitation has expired; ask for a new link") from None
    except signing.BadSignature:
        raise UserError("this invitation link is not valid") from None
    dataset = Dataset.objects.filter(pk=payload["dataset"]).first()
    if dataset is None:
        raise UserError("the dataset of this invitation no longer exists")
    return dataset


def invite_accept(*, token: str, username: str, password: str):
    """A new account from an invitation link, a member of the link's dataset; a UserError when the
    link is not valid or the credentials break a rule (invite_credentials_check)."""
    dataset = invite_dataset(token=token)
    username = invite_credentials_check(username=username, password=password)
    users = get_user_model().objects
    with transaction.atomic():
        if users.filter(username=username).exists():
            raise UserError("that user name is taken; choose another one")
        user = users.create_user(username=username, password=password)
        membership_ensure(user=user, dataset=dataset)
    return user
