"""The evaluation app's jobs in shards (one shard each, run by any worker: core.services.job_shards),
each shard doing the part of its block that is not done yet:

- the evaluation job: the test set's questions, in blocks of consecutive positions;
- the pair evaluation job: the counted pairs, in blocks of consecutive ids;
- the generation job: the dataset's contexts, in blocks of the order a run in one piece answers
  them in (longest first, then by question id).

A question's (pair's, context's) result depends on it and on the batch it was run in (padding),
so a shard holds whole batches: its size is rounded up to a multiple of the job's batch size,
and a fresh run runs exactly the batches of a run in one piece."""

from django.conf import settings

from core.services.job_shards import ShardSpec
from evaluation.models import Evaluation, Generation, PairEvaluation
from evaluation.selectors import generation_contexts
from evaluation.selectors_pairs import counted_pairs


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


def pair_shards_plan(*, evaluation: PairEvaluation, size: int) -> list[ShardSpec]:
    """Shards of ``size`` counted pairs each, by pair id (pairs done already included: a shard skips them)."""
    ids = list(counted_pairs(pair_set_id=evaluation.pair_set_id).order_by("id").values_list("id", flat=True))
    return [
        ShardSpec({"first_id": block[0], "last_id": block[-1]}, total=len(block))
        for block in (ids[start : start + size] for start in range(0, len(ids), size))
    ]


def context_order(context: dict) -> tuple[int, int]:
    """The order contexts are answered in: longest first (similar lengths share a batch, and a
    batch too big for memory fails at once), then by question id."""
    return (-sum(len(turn) + 1 for turn in context["turns"]), context["id"])


def generation_shards_plan(*, generation: Generation, size: int) -> list[ShardSpec]:
    """Shards of ``size`` contexts each, in answering order (those answered already included: a
    shard skips them); a shard's parameters list its questions in that order."""
    ids = [c["id"] for c in sorted(generation_contexts(generation=generation, pending=False), key=context_order)]
    return [
        ShardSpec({"question_ids": block}, total=len(block))
        for block in (ids[start : start + size] for start in range(0, len(ids), size))
    ]
