"""What each negatives job kind runs: its typed parameters handed to the service."""

from core.models import Job
from core.services.jobs import JobProgress
from negatives.job_params import GenerateNegativesParams
from negatives.manipulation import ManipulationSettings

from .generation import negatives_generate


def manipulation_settings(params: GenerateNegativesParams) -> ManipulationSettings:
    return ManipulationSettings(
        threshold=params.threshold,
        per_question=params.per_question,
        min_words=params.min_words,
        max_mask_share=params.max_mask_share,
        replace_with_context=params.replace_with_context,
        top_k=params.top_k,
        seed=params.seed,
    )


def generate_negatives(params: GenerateNegativesParams, job: Job, progress: JobProgress) -> dict:
    return negatives_generate(
        dataset_name=params.dataset,
        mlm_path=params.mlm,
        settings=manipulation_settings(params),
        progress=progress,
        job_id=job.pk,
    )


HANDLERS = {GenerateNegativesParams: generate_negatives}
