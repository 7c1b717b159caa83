"""Filter rules are versioned: a change is a new version, never an edit of an old one."""

from django.db import transaction

from annotation.models import FilterRules


def filter_rules_create(
    *,
    acceptable_min_score: int,
    acceptable_min_count: int,
    ungrammatical_max_score: int,
    ungrammatical_min_count: int,
    ground_truth_low_max_score: int,
    ground_truth_low_min_count: int,
    note: str = "",
) -> FilterRules:
    with transaction.atomic():
        # Lock the newest row so that two researchers saving at once get distinct versions.
        latest = FilterRules.objects.select_for_update().order_by("-version").first()
        next_version = (latest.version if latest else 0) + 1
        return FilterRules.objects.create(
            version=next_version,
            acceptable_min_score=acceptable_min_score,
            acceptable_min_count=acceptable_min_count,
            ungrammatical_max_score=ungrammatical_max_score,
            ungrammatical_min_count=ungrammatical_min_count,
            ground_truth_low_max_score=ground_truth_low_max_score,
            ground_truth_low_min_count=ground_truth_low_min_count,
            note=note,
        )
