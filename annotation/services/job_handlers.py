"""What each annotation job kind runs: its typed parameters handed to the service."""

from pathlib import Path

from annotation.job_params import (
    BuildTestsetParams,
    ImportDialoguesParams,
    ImportHFTestsetParams,
    ImportScoresParams,
    ImportTestsetParams,
    LoadDemoParams,
    QualityRefreshParams,
)
from annotation.models import Dataset
from core.models import Job
from core.services.jobs import JobProgress

from .demo import DEMO_DATASET, demo_load
from .dialogue_import import dialogues_import
from .quality import quality_refresh
from .score_import import scores_import
from .testset_build import testset_build
from .testset_import import testset_import
from .testset_import_hf import testset_hf_import


def import_dialogues(params: ImportDialoguesParams, job: Job, progress: JobProgress) -> dict:
    return dialogues_import(
        path=Path(params.path),
        fmt=params.format,
        dataset_name=params.dataset,
        context_turns=params.context_turns,
        encoding=params.encoding,
        progress=progress,
    )


def import_testset(params: ImportTestsetParams, job: Job, progress: JobProgress) -> dict:
    return testset_import(
        tsv_path=Path(params.path),
        scores_path=Path(params.scores_path) if params.scores_path else None,
        dataset_name=params.dataset,
        context_turns=params.context_turns,
        encoding=params.encoding,
        progress=progress,
    )


def import_testset_hf(params: ImportHFTestsetParams, job: Job, progress: JobProgress) -> dict:
    return testset_hf_import(folder=Path(params.path), dataset_name=params.dataset, name=params.name, progress=progress)


def import_scores(params: ImportScoresParams, job: Job, progress: JobProgress) -> dict:
    return scores_import(path=Path(params.path), encoding=params.encoding, progress=progress)


def build_testset(params: BuildTestsetParams, job: Job, progress: JobProgress) -> dict:
    testset = testset_build(
        dataset_name=params.dataset,
        name=params.name,
        false_per_question=params.false_per_question,
        seed=params.seed,
        rules_version=params.rules_version,
        progress=progress,
    )
    return {"testset_id": testset.pk, "name": testset.name, **testset.manifest["counts"]}


def refresh_quality(params: QualityRefreshParams, job: Job, progress: JobProgress) -> dict:
    snapshot = quality_refresh(dataset=Dataset.objects.get(pk=params.dataset_id))
    return {
        "dataset": snapshot.dataset.name,
        "annotators": len(snapshot.data["annotators"]),
        "alpha": snapshot.data["alpha"]["alpha"],
    }


def load_demo(params: LoadDemoParams, job: Job, progress: JobProgress) -> dict:
    return {"loaded": demo_load(with_pools=params.with_pools, with_models=params.with_models), "dataset": DEMO_DATASET}


HANDLERS = {
    ImportDialoguesParams: import_dialogues,
    ImportTestsetParams: import_testset,
    ImportHFTestsetParams: import_testset_hf,
    ImportScoresParams: import_scores,
    BuildTestsetParams: build_testset,
    QualityRefreshParams: refresh_quality,
    LoadDemoParams: load_demo,
}
