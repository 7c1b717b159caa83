"""The dashboard's snapshot: agreement (Fleiss' kappa, Krippendorff's alpha with a bootstrap
interval), the filter preview, the score histogram and per-annotator quality."""

import io

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count
from django.utils import timezone

from annotation.agreement import agreement_summary, krippendorff_bootstrap
from annotation.job_params import QualityRefreshParams
from annotation.models import Dataset, QualitySnapshot, Score
from annotation.selectors import dataset_stopping_summary, filter_preview, filter_rules_current
from annotation.selectors_agreement import OVERALL_AGREEMENT_KEY, dataset_agreement, score_category_table
from annotation.selectors_annotators import annotators_quality
from annotation.selectors_dataset import candidate_verdicts_by_source
from core.services.jobs import job_create

REFRESH_EVERY_SECONDS = 60


def quality_refresh(*, dataset: Dataset) -> QualitySnapshot:
    scores = Score.objects.filter(candidate__question__dataset=dataset)
    counted = scores.counted()
    histogram = [0] * 6
    for value, n in counted.values_list("value").annotate(n=Count("id")).order_by():
        histogram[value] = n
    # The filter rules build test sets; a rating dataset never becomes one.
    rules = filter_rules_current()
    preview = None if dataset.is_rating else filter_preview(dataset=dataset, rules=rules).as_dict()
    data = {
        "agreement": dataset_agreement(dataset=dataset),
        "alpha": krippendorff_bootstrap(score_category_table(scores=counted)),
        "preview": preview,
        # What probabilistic stopping did (the page's tolerance, decisions made early, spot checks).
        "stopping": None if dataset.is_rating else dataset_stopping_summary(dataset=dataset, rules=rules),
        # Per candidate source, the share the annotators found acceptable or ungrammatical.
        "verdicts_by_source": None if dataset.is_rating else candidate_verdicts_by_source(dataset=dataset, rules=rules),
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
        job_create(params=QualityRefreshParams(dataset_id=dataset_id), trigger="automatically, after new scores")


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
