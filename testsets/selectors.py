"""Reads: a dataset's test sets, the newest ones, agreement on a test set's candidates, and what
the shortcut audit reads (pools) and wrote (the newest audits)."""

from collections.abc import Iterator

from annotation.agreement import agreement_summary
from annotation.models import Candidate, Dataset, Score
from annotation.selectors_agreement import response_category_table, score_category_table
from annotation.selectors_response_counts import response_counts_table
from testsets.items import TestSetItem, testset_items
from testsets.models import ShortcutAudit, TestSet, TestSetCandidate, TestSetQuestion
from testsets.shortcuts.pools import Pool

POOL_CHUNK = 20_000


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
    if table := response_counts_table(dataset_id=testset.dataset_id):
        item, candidate = TestSetQuestion._meta.db_table, TestSetCandidate._meta.db_table
        chosen = (
            f"c.id IN (SELECT tsc.candidate_id FROM {candidate} tsc JOIN {item} tsq ON tsq.id = tsc.item_id "
            "WHERE tsq.testset_id = %s)"
        )
        return agreement_summary(response_category_table(table=table, where=chosen, params=[testset.pk]))
    chosen = TestSetCandidate.objects.filter(item__testset=testset).values("candidate_id")
    return agreement_summary(score_category_table(scores=Score.objects.counted().filter(candidate_id__in=chosen)))


def testsets_recent(*, limit: int = 10):
    """The newest test sets, with their datasets (the home page's list)."""
    return TestSet.objects.select_related("dataset").order_by("-created_at")[:limit]


def dataset_pools(*, dataset: Dataset, chunk: int = POOL_CHUNK) -> Iterator[Pool]:
    """The dataset's pools: each original question (not a derived one) with every candidate it has,
    the ground truth and all false ones, scored or not. Streamed in chunks of candidates, in
    question order; a question without exactly one ground truth is left out."""
    rows = (
        Candidate.objects.filter(question__dataset=dataset, question__derived_from__isnull=True)
        .order_by("question_id", "id")
        .values_list("question_id", "text", "is_ground_truth")
    )
    current, texts, labels = None, [], []
    for question_id, text, is_ground_truth in rows.iterator(chunk_size=chunk):
        if question_id != current:
            if current is not None and len(labels) == 1:
                yield Pool(current, tuple(texts), labels[0])
            current, texts, labels = question_id, [], []
        if is_ground_truth:
            labels.append(len(texts))
        texts.append(text)
    if current is not None and len(labels) == 1:
        yield Pool(current, tuple(texts), labels[0])


def candidate_texts(*, dataset: Dataset, ids: set[int]) -> dict[int, str]:
    """The texts of the dataset's original questions' candidates among ``ids`` (streamed)."""
    rows = Candidate.objects.filter(question__dataset=dataset, question__derived_from__isnull=True).values_list(
        "id", "text"
    )
    return {pk: text for pk, text in rows.iterator(chunk_size=POOL_CHUNK) if pk in ids}


def testset_pools(*, testset: TestSet) -> Iterator[Pool]:
    """A test set's questions as they were frozen: its chosen candidates, in its order."""
    for item in testset_items(testset):
        yield item_pool(item)


def item_pool(item: TestSetItem) -> Pool:
    """A frozen question as the shortcut audit reads it: its candidates' texts and the ground truth's place."""
    texts = tuple(c.candidate.text for c in item.candidates)
    label = next(i for i, c in enumerate(item.candidates) if c.is_ground_truth)
    return Pool(item.question_id, texts, label)


def shortcut_audit_latest(*, dataset: Dataset | None = None, testset: TestSet | None = None) -> ShortcutAudit | None:
    """The newest stored audit of a dataset's pools or of a test set (one query)."""
    audits = (
        ShortcutAudit.objects.filter(dataset=dataset)
        if dataset is not None
        else ShortcutAudit.objects.filter(testset=testset)
    )
    return audits.order_by("-created_at", "-id").first()
