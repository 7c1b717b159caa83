"""Creating and changing datasets: the rules every dataset keeps, whoever writes it (admin, imports,
rating datasets, the demo)."""

from django.db import IntegrityError, transaction

from annotation.models import Dataset
from annotation.services.assignment import works_refresh
from core.names import slug_check

# The settings that decide which responses still need scores.
STOPPING_FIELDS = ("adaptive_stopping", "stopping_tolerance", "spot_check_rate")


def dataset_name_check(*, name: str) -> str:
    return slug_check(name=name, what="dataset")


def dataset_save(*, dataset: Dataset) -> Dataset:
    """Save a new or changed dataset. Its name is a slug; a rating dataset never stops adaptively
    (every generated response needs all its ratings), so its adaptive_stopping flag is kept off."""
    dataset_name_check(name=dataset.name)
    if dataset.is_rating:
        dataset.adaptive_stopping = False
    before = Dataset.objects.filter(pk=dataset.pk).values(*STOPPING_FIELDS).first() if dataset.pk else None
    dataset.save()
    if before is not None and any(before[f] != getattr(dataset, f) for f in STOPPING_FIELDS):
        # Another tolerance opens questions the old one closed (or closes them): units follow at once.
        works_refresh(dataset=dataset)
    return dataset


def dataset_get_or_create(*, name: str, context_turns: int = 3) -> Dataset:
    """The dataset ``name``, created (a selection dataset) when there is none yet."""
    dataset_name_check(name=name)
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is not None:
        return dataset
    try:
        with transaction.atomic():
            return dataset_save(dataset=Dataset(name=name, context_turns=context_turns))
    except IntegrityError:  # created by a concurrent import in the meantime
        return Dataset.objects.get(name=name)
