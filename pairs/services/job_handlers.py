"""What each pairs job kind runs: its typed parameters handed to the service."""

from core.models import Job
from core.services.jobs import JobProgress
from pairs.job_params import BuildPairsParams, ImportPairsParams

from .building import pair_set_for_build, pairs_build
from .transfer import pairs_import


def build_pairs(params: BuildPairsParams, job: Job, progress: JobProgress) -> dict:
    pair_set = pair_set_for_build(
        dataset_name=params.dataset,
        set_name=params.name,
        types=params.types,
        criteria=params.criteria,
        per_question=params.per_question,
        seed=params.seed,
        repository_name=params.repository,
        created_by=job.created_by,
    )
    return pairs_build(pair_set=pair_set, progress=progress)


def import_pairs(params: ImportPairsParams, job: Job, progress: JobProgress) -> dict:
    return pairs_import(
        set_name=params.name, path=params.path, description=params.description, created_by=job.created_by
    )


HANDLERS = {BuildPairsParams: build_pairs, ImportPairsParams: import_pairs}
