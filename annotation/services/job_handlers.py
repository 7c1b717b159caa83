"""What each annotation job kind runs: its typed parameters handed to the service."""

from pathlib import Path

from annotation.job_params import ImportDialoguesParams, ImportScoresParams, LoadDemoParams, QualityRefreshParams
from annotation.models import Dataset
from core.models import Job
from core.services.jobs import JobProgress

from .demo import DEMO_DATASET, demo_load
from .dialogue_import import dialogues_import
from .quality import quality_refresh
from .score_import import scores_import


def import_dialogues(params: ImportDialoguesParams, job: Job, progress: JobProgress) -> dict:
    return dialogues_import(
        path=Path(params.path),
        fmt=params.format,
        dataset_name=params.dataset,
        context_turns=params.context_turns,
        max_dialogues=params.max_dialogues,
        encoding=params.encoding,
        normaliser=params.normaliser,
        progress=progress,
    )


def import_scores(params: ImportScoresParams, job: Job, progress: JobProgress) -> dict:
    return scores_import(path=Path(params.path), encoding=params.encoding, progress=progress)


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
    ImportScoresParams: import_scores,
    QualityRefreshParams: refresh_quality,
    LoadDemoParams: load_demo,
}
