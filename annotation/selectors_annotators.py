"""Reads about annotators: their progress, the datasets they work on, a dataset's members."""

from django.core.cache import cache
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.models import (
    Annotator,
    AnnotatorProvider,
    Assignment,
    AssignmentStatus,
    Dataset,
    DatasetMembership,
    QuestionWork,
)


def annotator_progress(*, annotator, dataset=None) -> dict:
    """Units done today and in total, and units still open to this annotator (in ``dataset`` when
    they chose one)."""
    start_of_day = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    done = Assignment.objects.filter(annotator=annotator, status=AssignmentStatus.SUBMITTED).aggregate(
        total=Count("id"), today=Count("id", filter=Q(submitted_at__gte=start_of_day))
    )
    # Counting the open units scans the annotator's datasets: a few seconds old is fine for the
    # progress line shown with every unit, but not older than their last submission (the key
    # changes with it) nor another dataset's count.
    key = f"wellchosen:open-units:{annotator.pk}:{done['total']}:{dataset.pk if dataset else 'any'}"
    open_units = cache.get(key)
    if open_units is None:
        memberships = DatasetMembership.objects.filter(annotator=annotator)
        if dataset is not None:
            memberships = memberships.filter(dataset=dataset)
        open_units = (
            QuestionWork.objects.filter(
                dataset_id__in=memberships.values("dataset_id"),
                is_open=True,
                slots_taken__lt=F("slots_needed"),
            )
            .exclude(question_id__in=Assignment.objects.filter(annotator=annotator).values("question_id"))
            .count()
        )
        cache.set(key, open_units, timeout=15)
    return {"today": done["today"], "total": done["total"], "open": open_units}


def annotator_datasets(*, annotator) -> list:
    """The datasets the annotator is a member of, by name."""
    return list(Dataset.objects.filter(memberships__annotator=annotator).order_by("name"))


def annotator_dataset_current(*, annotator):
    """The dataset the annotator chose to work on while they are still a member of it; None: any."""
    if annotator.chosen_dataset_id is None:
        return None
    return Dataset.objects.filter(pk=annotator.chosen_dataset_id, memberships__annotator=annotator).first()


def dataset_members_panel(*, dataset) -> dict:
    """The dashboard's members of a dataset, and the annotator accounts that could be added."""
    members = list(
        DatasetMembership.objects.filter(dataset=dataset)
        .select_related("annotator__user")
        .order_by("annotator__external_id")
    )
    addable = list(
        Annotator.objects.filter(provider=AnnotatorProvider.INTERNAL)
        .exclude(memberships__dataset=dataset)
        .order_by("external_id")
    )
    return {"members": members, "addable": addable}
