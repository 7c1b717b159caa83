"""Researchers bring annotators in: an account made for them, or a link they sign up with."""

import secrets

from django.contrib.auth import get_user_model
from django.core import signing
from django.db import transaction

from annotation.models import Annotator, AnnotatorProvider, Dataset, DatasetMembership
from core.errors import UserError

INVITE_SALT = "wellchosen.invite"
INVITE_DAYS = 14


def membership_ensure(*, user, dataset: Dataset, max_units: int | None = None) -> Annotator:
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


def annotator_invite_account(*, dataset: Dataset, username: str, max_units: int | None = None) -> tuple[object, str]:
    """A new account for an annotator (or an existing one added to the dataset). Returns the user and
    a password to hand over, empty when the account existed already."""
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
    dataset = invite_dataset(token=token)
    users = get_user_model().objects
    with transaction.atomic():
        if users.filter(username=username).exists():
            raise UserError("that user name is taken; choose another one")
        user = users.create_user(username=username, password=password)
        membership_ensure(user=user, dataset=dataset)
    return user
