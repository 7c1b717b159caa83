"""The negatives job in shards: the dataset's questions cut into blocks of consecutive ids (one
shard each, run by any worker: core.services.job_shards), and the shards' counts summed into the
job's report.

A question's negatives depend on that question and on the batch it was manipulated in (the
masked LM's passes pack a batch's sequences, and padding can move a score in its last bits), so
a shard holds whole batches: a fresh sharded run manipulates exactly the batches of a run in one
piece. The samples are seeded per question (its texts), not per batch."""

from django.conf import settings

from annotation.models import Dataset, Question
from core.services.job_shards import ShardSpec

from .generation import SUMMED, GenerationRun, negatives_report_new


def negatives_shard_size(*, batch_size: int, size: int | None = None) -> int:
    """Questions per shard: ``size`` (default WELLCHOSEN_JOB_SHARD_SIZE) rounded up to whole
    batches of ``batch_size``."""
    size = settings.WELLCHOSEN_JOB_SHARD_SIZE if size is None else size
    return -(-max(1, size) // batch_size) * batch_size


def negatives_shards_plan(*, dataset: Dataset, setup: str, size: int) -> list[ShardSpec]:
    """Shards of ``size`` questions each, by question id (those finished already included: a shard
    skips them), each with the setup the job planned them under."""
    ids = list(
        Question.objects.filter(dataset=dataset, derived_from__isnull=True).order_by("id").values_list("id", flat=True)
    )
    return [
        ShardSpec({"first_id": block[0], "last_id": block[-1], "setup": setup}, total=len(block))
        for block in (ids[start : start + size] for start in range(0, len(ids), size))
    ]


def negatives_reports_merge(*, dataset: Dataset, run: GenerationRun, reports: list[dict]) -> dict:
    """The job's counts: its shards' summed (negatives_report_finish computes the shares from them)."""
    merged = negatives_report_new(dataset=dataset, run=run)
    for key in SUMMED:
        merged[key] = sum(report.get(key, 0) for report in reports)
    return merged
