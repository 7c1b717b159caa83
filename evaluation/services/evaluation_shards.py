"""The evaluation job in shards: the test set's questions cut into blocks of consecutive
positions (one shard each, run by any worker: core.services.job_shards), each shard scoring the
questions of its block that have no result yet.

A question's selection and losses depend on that question and on the batch it was scored in
(padding), so a shard holds whole batches: its size is rounded up to a multiple of the job's
batch size, and a fresh run scores exactly the batches of a run in one piece."""

from django.conf import settings

from core.services.job_shards import ShardSpec
from evaluation.models import Evaluation


def evaluation_shard_size(*, batch_questions: int, size: int | None = None) -> int:
    """Questions per shard: ``size`` (default WELLCHOSEN_EVALUATION_SHARD_SIZE) rounded up to
    whole batches of ``batch_questions``."""
    size = settings.WELLCHOSEN_EVALUATION_SHARD_SIZE if size is None else size
    batches = -(-max(1, size) // batch_questions)
    return batches * batch_questions


def evaluation_shards_plan(*, evaluation: Evaluation, size: int) -> list[ShardSpec]:
    """Shards of ``size`` questions each, by test-set position (questions done already included:
    a shard skips them)."""
    positions = list(evaluation.testset.items.order_by("position").values_list("position", flat=True))
    return [
        ShardSpec({"first_position": block[0], "last_position": block[-1]}, total=len(block))
        for block in (positions[start : start + size] for start in range(0, len(positions), size))
    ]
