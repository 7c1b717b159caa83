"""Creating and changing datasets: the rules every dataset keeps, whoever writes it (admin, imports,
rating datasets, the demo)."""

from django.db import IntegrityError, transaction

from annotation.models import Dataset
from annotation.services.assignment import works_refresh
from core.names import slug_check
from core.normalisers import TextNormaliser, normaliser_get, normaliser_mix_check

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


def dataset_normaliser_check(*, name: str, normaliser: str) -> None:
    """Whether an import into dataset ``name`` (new or existing) may apply ``normaliser``: a
    UserError when it holds questions imported with another (the import form asks before the job)."""
    chosen = normaliser_get(normaliser)
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is not None:
        _normaliser_mix_check(dataset=dataset, normaliser=chosen)


def _normaliser_mix_check(*, dataset: Dataset, normaliser: TextNormaliser) -> None:
    normaliser_mix_check(
        what=f"dataset {dataset.name!r}",
        recorded=(dataset.text_normaliser, dataset.text_normaliser_version),
        normaliser=normaliser,
        holds_texts=dataset.questions.exists(),
    )


def dataset_normaliser_set(*, dataset: Dataset, normaliser: TextNormaliser) -> None:
    """Record the normaliser an import into ``dataset`` applies; refused when the dataset holds
    questions imported with another one (or another version of it)."""
    _normaliser_mix_check(dataset=dataset, normaliser=normaliser)
    if (dataset.text_normaliser, dataset.text_normaliser_version) != (normaliser.name, normaliser.version):
        dataset.text_normaliser, dataset.text_normaliser_version = normaliser.name, normaliser.version
        dataset.save(update_fields=["text_normaliser", "text_normaliser_version"])
