"""The pool job in shards: its questions cut into blocks of consecutive ids (one shard each, run
by any worker: core.services.job_shards), and the shards' reports summed into the job's.

A question's pool depends on that question alone (ties broken by utterance id, each ground
truth encoded alone), so the pools do not depend on the shard size or on which worker ran what."""

from core.services.job_shards import ShardSpec
from retrieval.services.pool_targets import PoolTarget, pool_questions

# The counts of a pool report (retrieval.services.pools.pools_build_questions) that add up.
SUMMED = ("questions", "skipped_finished", "built", "failed", "candidates_added", "short_pools")


def pool_shards_plan(*, target: PoolTarget, size: int) -> list[ShardSpec]:
    """Shards of ``size`` questions each, by question id, with the indexes every shard searches."""
    ids = list(pool_questions(target=target).order_by("id").values_list("id", flat=True))
    shared = {"lexical_index": target.lexical_index.pk, "dense_index": target.dense_index.pk}
    return [
        ShardSpec({"first_id": block[0], "last_id": block[-1], **shared}, total=len(block))
        for block in (ids[start : start + size] for start in range(0, len(ids), size))
    ]


def pool_reports_merge(reports: list[dict]) -> dict:
    """One report for the job from its shards' (one at least): their counts summed, the rest
    (dataset, repository, index versions: the same in every shard) from the first."""
    merged = {key: value for key, value in reports[0].items() if key not in SUMMED}
    for key in SUMMED:
        merged[key] = sum(report.get(key, 0) for report in reports)
    return merged
