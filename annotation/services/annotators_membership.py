"""Which datasets an annotator works on: researchers add existing annotators to a dataset and take
them off it; an annotator with several datasets chooses one (or any) to work on.

Taking an annotator off a dataset keeps everything they did: their scores stay (they belong to
the annotator, not to the membership) and a unit they hold under lease stays theirs until they
submit it or its lease runs out. Releasing it would throw away the scores they are typing; the
lease is short and its slot is held either way. They get no new unit of that dataset.
"""

from dataclasses import dataclass

from django.db import transaction

from annotation.models import (
    Annotator,
    AnnotatorProvider,
    Assignment,
    AssignmentStatus,
    Dataset,
    DatasetMembership,
)
from core.errors import UserError

from .invitations import max_units_check


def members_add(*, dataset: Dataset, annotators: list[Annotator], max_units: int | None = None) -> int:
    """Add annotators to the dataset (idempotent: a member stays one; a given cap replaces theirs).
    Placeholder annotators of imported scores are nobody to give work to and are refused.
    Returns how many were not members before."""
    max_units_check(max_units=max_units)
    placeholders = [
        str(a) for a in Annotator.objects.filter(pk__in=[a.pk for a in annotators], provider=AnnotatorProvider.IMPORTED)
    ]
    if placeholders:
        raise UserError(f"{', '.join(placeholders)}: placeholders of imported scores cannot annotate")
    if not annotators:
        raise UserError("choose at least one annotator to add")
    with transaction.atomic():
        Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
        ids = {a.pk for a in annotators}
        existing = set(
            DatasetMembership.objects.filter(dataset=dataset, annotator_id__in=ids).values_list(
                "annotator_id", flat=True
            )
        )
        DatasetMembership.objects.bulk_create(
            [DatasetMembership(dataset=dataset, annotator_id=pk, max_units=max_units) for pk in ids - existing],
            ignore_conflicts=True,
        )
        if max_units is not None and existing:
            DatasetMembership.objects.filter(dataset=dataset, annotator_id__in=existing).update(max_units=max_units)
    return len(ids - existing)


@dataclass(frozen=True)
class MemberRemoval:
    removed: bool  # False: they were no member (nothing to do)
    leased: int  # units of the dataset they still hold under lease (theirs to finish)

    def message(self, *, annotator: Annotator, dataset: Dataset) -> str:
        if not self.removed:
            return f"{annotator} is not a member of {dataset.name}."
        text = f"{annotator} no longer gets units of {dataset.name}; their scores stay."
        if self.leased:
            text += f" They may finish the {self.leased} unit(s) they hold until the lease runs out."
        return text


def member_remove(*, dataset: Dataset, annotator: Annotator) -> MemberRemoval:
    """Take the annotator off the dataset (idempotent). Scores and leases are kept (see the module);
    a choice of this dataset falls back to "any"."""
    with transaction.atomic():
        Annotator.objects.select_for_update().filter(pk=annotator.pk).first()  # unit_next locks it too
        deleted, _ = DatasetMembership.objects.filter(dataset=dataset, annotator=annotator).delete()
        Annotator.objects.filter(pk=annotator.pk, chosen_dataset=dataset).update(chosen_dataset=None)
        leased = Assignment.objects.filter(
            annotator=annotator, question__dataset=dataset, status=AssignmentStatus.LEASED
        ).count()
    annotator.refresh_from_db(fields=["chosen_dataset"])
    return MemberRemoval(removed=bool(deleted), leased=leased if deleted else 0)


# The choice of "any dataset": no dataset is named so (names are slugs, see core.names).
ANY_DATASET = "*"


def annotator_dataset_choose(*, annotator: Annotator, dataset_name: str) -> Dataset | None:
    """Record which of their datasets the annotator works on: a dataset's name, or ANY_DATASET
    (None: any of theirs). Anything else, or a dataset they are no member of, is a UserError."""
    if dataset_name == ANY_DATASET:
        dataset = None
    else:
        dataset = Dataset.objects.filter(name=dataset_name[:200], memberships__annotator=annotator).first()
        if dataset is None:
            raise UserError("choose one of your datasets, or any of them")
    with transaction.atomic():
        Annotator.objects.filter(pk=annotator.pk).update(chosen_dataset=dataset)
    annotator.chosen_dataset = dataset
    return dataset
