"""Reads: a dataset's test sets, the newest ones, and agreement on a test set's candidates."""

from annotation.agreement import agreement_summary
from annotation.models import Dataset, Score
from annotation.selectors_agreement import score_category_table
from testsets.models import TestSet, TestSetCandidate


def dataset_testsets(*, dataset: Dataset, limit: int = 5) -> tuple[int, list[dict]]:
    """How many test sets (releases) were built from the dataset, and the newest ``limit``."""
    testsets = TestSet.objects.filter(dataset=dataset)
    rows = [
        {"pk": pk, "name": name, "created_at": created, "questions": (manifest.get("counts") or {}).get("questions")}
        for pk, name, created, manifest in testsets.order_by("-created_at", "-id").values_list(
            "pk", "name", "created_at", "manifest"
        )[:limit]
    ]
    return (len(rows) if len(rows) < limit else testsets.count()), rows


def testset_agreement(*, testset: TestSet) -> dict:
    """Agreement on the candidates of a test set, over the scores counted now (one query)."""
    chosen = TestSetCandidate.objects.filter(item__testset=testset).values("candidate_id")
    return agreement_summary(score_category_table(scores=Score.objects.counted().filter(candidate_id__in=chosen)))


def testsets_recent(*, limit: int = 10):
    """The newest test sets, with their datasets (the home page's list)."""
    return TestSet.objects.select_related("dataset").order_by("-created_at")[:limit]
