"""What the evaluation app's job kinds run: their typed parameters handed to the service."""

from core.models import Job, JobShard
from core.services.job_shards import ShardProgress
from core.services.jobs import JobProgress
from evaluation.job_params import CampaignParams, EvaluatePairsParams, EvaluateParams, GenerateParams

from .campaigns import campaign_run, campaign_trials_shard_score
from .evaluations import evaluation_run, evaluation_shard_score
from .generations import generation_run, generation_shard_generate
from .pair_evaluations import pair_evaluation_run, pair_evaluation_shard_score


def evaluate(params: EvaluateParams, job: Job, progress: JobProgress) -> dict:
    """The test set's questions in shards that any worker may run (evaluate_shard), then the
    summary from the stored results. Inside a campaign's job too: its shards are the
    evaluation job's own."""
    return evaluation_run(
        evaluation_id=params.evaluation_id,
        batch_questions=params.batch_questions,
        device=params.device,
        progress=progress,
        job=job,
    )


def evaluate_shard(params: EvaluateParams, job: Job, shard: JobShard, progress: ShardProgress) -> dict:
    """One block of the evaluation job's questions."""
    return evaluation_shard_score(
        evaluation_id=params.evaluation_id,
        first_position=shard.params["first_position"],
        last_position=shard.params["last_position"],
        batch_questions=params.batch_questions,
        device=params.device,
        progress=progress,
    )


def evaluate_pairs(params: EvaluatePairsParams, job: Job, progress: JobProgress) -> dict:
    """The counted pairs in shards that any worker may run (evaluate_pairs_shard), then the
    summary from the stored results."""
    return pair_evaluation_run(
        evaluation_id=params.evaluation_id,
        batch_pairs=params.batch_pairs,
        device=params.device,
        progress=progress,
        job=job,
    )


def evaluate_pairs_shard(params: EvaluatePairsParams, job: Job, shard: JobShard, progress: ShardProgress) -> dict:
    """One block of the pair evaluation job's pairs."""
    return pair_evaluation_shard_score(
        evaluation_id=params.evaluation_id,
        first_id=shard.params["first_id"],
        last_id=shard.params["last_id"],
        batch_pairs=params.batch_pairs,
        device=params.device,
        progress=progress,
    )


def generate(params: GenerateParams, job: Job, progress: JobProgress) -> dict:
    """The dataset's contexts in shards that any worker may run (generate_shard), then the
    summary from the stored responses."""
    return generation_run(
        generation_id=params.generation_id,
        batch_size=params.batch_size,
        device=params.device,
        progress=progress,
        job=job,
    )


def generate_shard(params: GenerateParams, job: Job, shard: JobShard, progress: ShardProgress) -> dict:
    """One block of the generation job's contexts."""
    return generation_shard_generate(
        generation_id=params.generation_id,
        question_ids=shard.params["question_ids"],
        batch_size=params.batch_size,
        device=params.device,
        progress=progress,
    )


def campaign(params: CampaignParams, job: Job, progress: JobProgress) -> dict:
    """The systems' evaluation jobs run inside this one (their shards are theirs), then the
    RANDOM trials in shards of this job (campaign_shard), then the report."""
    return campaign_run(
        campaign_id=params.campaign_id, evaluate=params.evaluate, device=params.device, progress=progress, job=job
    )


def campaign_shard(params: CampaignParams, job: Job, shard: JobShard, progress: ShardProgress) -> dict:
    """One system's block of the campaign's RANDOM trials."""
    return campaign_trials_shard_score(
        campaign_id=params.campaign_id,
        system_id=shard.params["system_id"],
        first_trial=shard.params["first_trial"],
        last_trial=shard.params["last_trial"],
        device=params.device,
        progress=progress,
    )


HANDLERS = {
    EvaluateParams: evaluate,
    EvaluatePairsParams: evaluate_pairs,
    GenerateParams: generate,
    CampaignParams: campaign,
}
# Kinds whose handler splits the work into shards (core.services.job_shards): each shard's work.
SHARD_HANDLERS = {
    EvaluateParams: evaluate_shard,
    EvaluatePairsParams: evaluate_pairs_shard,
    GenerateParams: generate_shard,
    CampaignParams: campaign_shard,
}
