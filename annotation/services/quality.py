"""The dashboard's snapshot: agreement (Fleiss' kappa, Krippendorff's alpha with a bootstrap
interval), the filter preview, the score histogram and per-annotator quality."""

import io

from django.conf import settings
from django.core.cache import cache
from django.db.models import Avg, Count, Q
from django.utils import timezone

from annotation.agreement import agreement_summary, krippendorff_bootstrap
from annotation.job_params import QualityRefreshParams
from annotation.models import Annotator, Assignment, AssignmentStatus, Dataset, QualitySnapshot, Score
from annotation.quality import AnnotatorQuality, flag, leave_one_out_agreement
from annotation.selectors import filter_preview, filter_rules_current
from annotation.selectors_agreement import OVERALL_AGREEMENT_KEY, dataset_agreement, score_category_table
from core.services.jobs import job_create

from .annotators import annotator_label

REFRESH_EVERY_SECONDS = 60


def quality_refresh(*, dataset: Dataset) -> QualitySnapshot:
    scores = Score.objects.filter(candidate__question__dataset=dataset)
    counted = scores.counted()
    histogram = [0] * 6
    for value, n in counted.values_list("value").annotate(n=Count("id")).order_by():
        histogram[value] = n
    # The filter rules build test sets; a rating dataset never becomes one.
    preview = None if dataset.is_rating else filter_preview(dataset=dataset, rules=filter_rules_current()).as_dict()
    data = {
        "agreement": dataset_agreement(dataset=dataset),
        "alpha": krippendorff_bootstrap(score_category_table(scores=counted)),
        "preview": preview,
        "histogram": histogram,  # indexed by score, 0-5 (0 stays empty when rating 1-5)
        "histogram_svg": _histogram_svg(histogram, low=dataset.min_score),
        "annotators": [q.as_dict() for q in annotators_quality(dataset=dataset)],
    }
    snapshot, _ = QualitySnapshot.objects.update_or_create(
        dataset=dataset, defaults={"data": data, "computed_at": timezone.now()}
    )
    overall_agreement_refresh_soon()
    return snapshot


def quality_refresh_soon(*, dataset_id: int) -> None:
    """Queue a refresh at most once a minute per dataset (called after each submission)."""
    if cache.add(f"wellchosen:quality:{dataset_id}", 1, timeout=REFRESH_EVERY_SECONDS):
        job_create(params=QualityRefreshParams(dataset_id=dataset_id))


def annotators_quality(*, dataset: Dataset) -> list[AnnotatorQuality]:
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


def _histogram_svg(histogram: list[int], *, low: int = 0) -> str:
    """Bars for the scores ``low``..5 of the dataset's scale (0 is "ungrammatical", drawn red)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    colors = ["#b42318", "#98a2b3", "#98a2b3", "#2f5bd3", "#2f5bd3", "#2f5bd3"]
    values = range(low, 6)
    figure, axes = plt.subplots(figsize=(4.2, 2.2), dpi=100)
    axes.bar(values, histogram[low:], color=colors[low:])
    axes.set_xticks(values)
    axes.set_xlabel("score")
    axes.set_ylabel("scores")
    axes.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg")
    plt.close(figure)
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


def overall_agreement_refresh_soon() -> None:
    """Recompute the site-wide agreement at most every WELLCHOSEN_OVERALL_AGREEMENT_SECONDS: every
    dataset's refresh asks for it (one a minute per dataset under annotation), and it reads every
    score of the site (about 4 s at 36,000 scored items), so one recomputation serves them all."""
    if cache.add("wellchosen:overall-agreement:fresh", 1, timeout=settings.WELLCHOSEN_OVERALL_AGREEMENT_SECONDS):
        overall_agreement_refresh()


def overall_agreement_refresh() -> dict:
    """Agreement over every dataset's scores (kappa on the fully annotated items, alpha with its
    bootstrap interval), kept in the cache for the dashboard's index. Computed here, in the refresh
    job, because it reads one row per scored candidate of the whole site and bootstraps: seconds on
    a large site, far too slow for a page."""
    counted = Score.objects.counted()
    table = score_category_table(scores=counted)
    data = {
        "kappa": agreement_summary(table),
        "alpha": krippendorff_bootstrap(table, replicates=100),
        "computed_at": timezone.now().isoformat(),
    }
    cache.set(OVERALL_AGREEMENT_KEY, data, timeout=None)
    return data
