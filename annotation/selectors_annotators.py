"""Reads about annotators: their label, progress and quality, the datasets they work on, a dataset's
members."""

from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db.models import Avg, Count, F, Prefetch, Q
from django.utils import timezone

from annotation.models import (
    Annotator,
    AnnotatorProvider,
    Assignment,
    AssignmentStatus,
    Dataset,
    DatasetMembership,
    Invitation,
    QuestionWork,
    Score,
)
from annotation.quality import AnnotatorQuality, flag, leave_one_out_agreement


def annotator_label(annotator: Annotator) -> str:
    return f"{annotator.provider}:{annotator.external_id}"


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
        .select_related("annotator__user", "invitation")
        .order_by("annotator__external_id")
    )
    addable = list(
        Annotator.objects.filter(provider=AnnotatorProvider.INTERNAL)
        .exclude(memberships__dataset=dataset)
        .order_by("external_id")
    )
    return {"members": members, "addable": addable, "invitations": dataset_invitations(dataset=dataset)}


def dataset_invitations(*, dataset) -> list:
    """The dataset's sign-up links, newest first, each with the members who joined through it (two
    queries at any size)."""
    joined = Prefetch(
        "memberships",
        queryset=DatasetMembership.objects.select_related("annotator").order_by("created_at"),
        to_attr="joined",
    )
    return list(Invitation.objects.filter(dataset=dataset).select_related("created_by").prefetch_related(joined))


def annotators_quality(*, dataset: Dataset) -> list[AnnotatorQuality]:
    """The quality measures and flags of every annotator who scored in the dataset, the most flagged
    first."""
    thresholds = settings.WELLCHOSEN_QC_THRESHOLDS
    scores = Score.objects.filter(candidate__question__dataset=dataset)
    # The annotators are those of this first query. Each later query may see scores committed
    # since (annotation goes on while this runs); an annotator who first appears there waits for
    # the next refresh.
    per_annotator = list(
        scores.values("annotator_id").annotate(
            n=Count("id"),
            gts=Count("id", filter=Q(candidate__is_ground_truth=True)),
            gts_ok=Count("id", filter=Q(candidate__is_ground_truth=True, value__gte=3)),
            ms=Avg("duration_ms"),
        )
    )
    annotators = Annotator.objects.filter(pk__in=[row["annotator_id"] for row in per_annotator])
    result = {
        a.pk: AnnotatorQuality(
            annotator_id=a.pk, label=annotator_label(a), blocked=a.is_blocked, excluded=a.scores_excluded
        )
        for a in annotators
    }
    for row in per_annotator:
        quality = result.get(row["annotator_id"])
        if quality is None:  # deleted since
            continue
        quality.scores, quality.ground_truths, quality.ground_truths_ok = row["n"], row["gts"], row["gts_ok"]
        quality.seconds_per_response = round(row["ms"] / 1000, 2) if row["ms"] is not None else None
    units = Assignment.objects.filter(question__dataset=dataset, status=AssignmentStatus.SUBMITTED)
    for row in units.values("annotator_id").annotate(
        n=Count("id"),
        checks=Count("id", filter=Q(check_passed__isnull=False)),
        passed=Count("id", filter=Q(check_passed=True)),
    ):
        if row["annotator_id"] in result:
            quality = result[row["annotator_id"]]
            quality.units, quality.checks, quality.checks_passed = row["n"], row["checks"], row["passed"]
    # Units in which every response got the same score (one row per unit, not per score).
    for row in (
        scores.filter(assignment__isnull=False)
        .values("assignment_id", "annotator_id")
        .annotate(distinct=Count("value", distinct=True), n=Count("id"))
    ):
        if row["distinct"] == 1 and row["n"] >= 2 and row["annotator_id"] in result:
            result[row["annotator_id"]].identical_units += 1
    by_item: dict[int, list[tuple[int, int]]] = {}
    for candidate_id, annotator_id, value in (
        scores.counted().values_list("candidate_id", "annotator_id", "value").iterator(chunk_size=20000)
    ):
        by_item.setdefault(candidate_id, []).append((annotator_id, value))
    for annotator_id, (compared, agree) in leave_one_out_agreement(by_item).items():
        if annotator_id in result:
            result[annotator_id].loo_compared, result[annotator_id].loo_agree = compared, agree
    for quality in result.values():
        quality.flags = flag(quality, thresholds)
    return sorted(result.values(), key=lambda q: (-len(q.flags), q.label))


def correction_deadline(assignment: Assignment):
    """Until when the annotator may correct the unit's scores (None: not a submitted unit, or corrections
    are off)."""
    minutes = settings.WELLCHOSEN_SCORE_CORRECTION_MINUTES
    if minutes <= 0 or assignment.status != AssignmentStatus.SUBMITTED or assignment.submitted_at is None:
        return None
    return assignment.submitted_at + timedelta(minutes=minutes)


def unit_correctable(*, annotator: Annotator) -> Assignment | None:
    """The annotator's most recently submitted unit while its scores may still be corrected."""
    minutes = settings.WELLCHOSEN_SCORE_CORRECTION_MINUTES
    if minutes <= 0:
        return None
    return (
        Assignment.objects.filter(
            annotator=annotator,
            status=AssignmentStatus.SUBMITTED,
            submitted_at__gte=timezone.now() - timedelta(minutes=minutes),
        )
        .order_by("-submitted_at", "-id")
        .first()
    )


def unit_answers_submitted(*, assignment: Assignment) -> dict[str, dict]:
    """The unit's responses as submitted, by key: the scores, and the attention check's answer."""
    stored = {
        candidate_id: (value, labels)
        for candidate_id, value, labels in Score.objects.filter(assignment=assignment).values_list(
            "candidate_id", "value", "labels"
        )
    }
    given = {}
    for item in assignment.items:
        if item.get("check"):
            value, labels = assignment.check_value, []
        else:
            value, labels = stored.get(item.get("candidate_id"), (None, []))
        given[item["key"]] = {"value": "" if value is None else str(value), "labels": labels}
    return given
