"""A campaign job's RANDOM trials in shards: one shard per system and block of consecutive trials
(run by any worker: core.services.job_shards), each shard scoring the trials of its block that
have no result yet, and the shards' counts summed into the job's RANDOM report.

A trial's draw depends on the campaign's seed and the trial's number alone, and a language model
scores blocks of trials per call (``campaigns.trials_per_call``), so a shard holds whole blocks and
starts at a block's first trial: a fresh sharded run scores exactly the calls of a run in one
piece (the ground truths too, once per shard: the same call each time)."""

from django.conf import settings

from core.services.job_shards import ShardSpec
from evaluation.models import System

# The counts of a RANDOM report (campaigns.campaign_random_run) that add up over shards.
SUMMED = ("scored", "skipped")


def trial_shard_size(*, per_call: int, size: int | None = None) -> int:
    """Trials per shard: ``size`` (default WELLCHOSEN_TRIAL_SHARD_SIZE) rounded up to whole blocks
    of ``per_call`` trials."""
    size = settings.WELLCHOSEN_TRIAL_SHARD_SIZE if size is None else size
    return -(-max(1, size) // per_call) * per_call


def trial_shards_plan(*, systems: list[System], trials: int, size: int) -> list[ShardSpec]:
    """Shards of ``size`` trials each, system by system (trials done already included: a shard
    skips them)."""
    return [
        ShardSpec(
            {"system_id": system.pk, "first_trial": first, "last_trial": min(first + size, trials) - 1},
            total=min(first + size, trials) - first,
        )
        for system in systems
        for first in range(0, trials, size)
    ]


def trial_reports_merge(reports: list[dict], *, trials: int, systems: int) -> dict:
    """The job's RANDOM report from its shards' counts: that of a run in one piece."""
    merged = {"trials": trials, "systems": systems}
    for key in SUMMED:
        merged[key] = sum(report.get(key, 0) for report in reports)
    return merged
