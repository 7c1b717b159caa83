"""What each negatives job kind runs: its typed parameters handed to the service."""

from annotation.selectors import testset_dataset_get
from core.errors import UserError
from core.models import Job, JobShard
from core.services.job_shards import ShardProgress, job_shards_run
from core.services.jobs import JobProgress
from negatives.job_params import GenerateNegativesParams
from negatives.manipulation import ManipulationSettings

from .generation import (
    PHASE_GENERATE,
    PHASE_GUARD,
    PHASE_LOAD,
    negatives_generate_questions,
    negatives_prepare,
    negatives_report_finish,
    negatives_run_load,
)
from .generation_shards import negatives_reports_merge, negatives_shard_size, negatives_shards_plan
from .guard import mlm_guard_check


def manipulation_settings(params: GenerateNegativesParams) -> ManipulationSettings:
    return ManipulationSettings(
        threshold=params.threshold,
        per_question=params.per_question,
        min_words=params.min_words,
        max_mask_share=params.max_mask_share,
        replace_with_context=params.replace_with_context,
        punctuation=params.punctuation,
        paper=params.paper,
        top_k=params.top_k,
        seed=params.seed,
    )


def generate_negatives(params: GenerateNegativesParams, job: Job, progress: JobProgress) -> dict:
    """The checks and the run's setup here, then the questions in shards that any worker may run
    (generate_negatives_shard); the report sums theirs."""
    settings = manipulation_settings(params)
    if params.batch_size < 1:
        raise UserError(f"batch size must be at least 1, not {params.batch_size}")
    dataset = negatives_prepare(dataset_name=params.dataset, settings=settings)
    progress.update(done=0, total=0, phase=PHASE_LOAD, force=True)
    # loaded here for the setup and the guard; this worker's shards reuse it (one load per worker process)
    manipulator, run = negatives_run_load(mlm_path=params.mlm, settings=settings)
    progress.update(done=0, total=0, phase=PHASE_GUARD, force=True)
    guard = mlm_guard_check(
        dataset=dataset, manipulator=manipulator, model=run.model_version, skip=params.skip_guard, toy=run.toy_model
    )
    size = negatives_shard_size(batch_size=params.batch_size)
    reports = job_shards_run(
        job=job,
        progress=progress,
        plan=lambda: negatives_shards_plan(dataset=dataset, setup=run.setup, size=size),
        phase=PHASE_GENERATE,
        unit="questions",
    )
    report = negatives_report_finish(negatives_reports_merge(dataset=dataset, run=run, reports=reports))
    return {**report, "mlm_guard": guard}


def generate_negatives_shard(
    params: GenerateNegativesParams, job: Job, shard: JobShard, progress: ShardProgress
) -> dict:
    """One block of the job's questions, under the setup the job planned them with."""
    dataset = testset_dataset_get(name=params.dataset, adds="false candidates")
    manipulator, run = negatives_run_load(mlm_path=params.mlm, settings=manipulation_settings(params))
    if run.setup != shard.params["setup"]:
        raise UserError(
            f"the masked LM changed since the job planned its shards (setup {run.setup}, not "
            f"{shard.params['setup']}): start the job again"
        )
    return negatives_generate_questions(
        dataset=dataset,
        manipulator=manipulator,
        run=run,
        batch_size=params.batch_size,
        progress=progress,
        job_id=job.pk,
        first_id=shard.params["first_id"],
        last_id=shard.params["last_id"],
    )


HANDLERS = {GenerateNegativesParams: generate_negatives}
# Kinds whose handler splits the work into shards (core.services.job_shards): each shard's work.
SHARD_HANDLERS = {GenerateNegativesParams: generate_negatives_shard}
