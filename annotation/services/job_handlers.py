"""What each annotation job kind runs: unpack the Job's params and call the service."""

from pathlib import Path

from annotation.models import Job, JobKind

from .dialogue_import import dialogues_import
from .jobs import JobProgress
from .score_import import scores_import
from .testset_build import testset_build
from .testset_import import testset_import


def import_dialogues(job: Job, progress: JobProgress) -> dict:
    p = job.params
    return dialogues_import(
        path=Path(p["path"]),
        fmt=p["format"],
        dataset_name=p["dataset"],
        context_turns=p.get("context_turns", 3),
        encoding=p.get("encoding", "utf-8"),
        progress=progress,
    )


def import_testset(job: Job, progress: JobProgress) -> dict:
    p = job.params
    return testset_import(
        tsv_path=Path(p["path"]),
        scores_path=Path(p["scores_path"]) if p.get("scores_path") else None,
        dataset_name=p["dataset"],
        context_turns=p.get("context_turns", 3),
        encoding=p.get("encoding", "utf-8"),
        progress=progress,
    )


def import_scores(job: Job, progress: JobProgress) -> dict:
    p = job.params
    return scores_import(path=Path(p["path"]), encoding=p.get("encoding", "utf-8"), progress=progress)


def build_testset(job: Job, progress: JobProgress) -> dict:
    p = job.params
    testset = testset_build(
        dataset_name=p["dataset"],
        name=p["name"],
        false_per_question=p.get("false_per_question", 3),
        seed=p.get("seed", 0),
        rules_version=p.get("rules_version"),
        progress=progress,
    )
    return {"testset_id": testset.pk, "name": testset.name, **testset.manifest["counts"]}


def quality_refresh_handler(job: Job, progress: JobProgress) -> dict:
    from annotation.models import Dataset

    from .quality import quality_refresh

    snapshot = quality_refresh(dataset=Dataset.objects.get(pk=job.params["dataset_id"]))
    return {
        "dataset": snapshot.dataset.name,
        "annotators": len(snapshot.data["annotators"]),
        "alpha": snapshot.data["alpha"]["alpha"],
    }


def crowd_publish_handler(job: Job, progress: JobProgress) -> dict:
    from annotation.crowd.services import crowd_batch_publish
    from annotation.models import CrowdBatch

    batch = CrowdBatch.objects.select_related("dataset").get(pk=job.params["batch_id"])
    published = crowd_batch_publish(batch=batch, confirm_production=job.params.get("confirm_production", False))
    return {"batch": batch.name, "published_tasks": published}


def crowd_sync_handler(job: Job, progress: JobProgress) -> dict:
    from annotation.crowd.services import crowd_batch_sync
    from annotation.models import CrowdBatch

    batch = CrowdBatch.objects.select_related("dataset").get(pk=job.params["batch_id"])
    report = crowd_batch_sync(batch=batch)
    return {"batch": batch.name, **report.as_dict()}


HANDLERS = {
    JobKind.IMPORT_DIALOGUES: import_dialogues,
    JobKind.IMPORT_TESTSET: import_testset,
    JobKind.IMPORT_SCORES: import_scores,
    JobKind.BUILD_TESTSET: build_testset,
    JobKind.QUALITY_REFRESH: quality_refresh_handler,
    JobKind.CROWD_PUBLISH: crowd_publish_handler,
    JobKind.CROWD_SYNC: crowd_sync_handler,
}
