"""The candidate-pools step of the dataset workspace (annotation.workspace), registered in apps.py."""

from django.urls import reverse

from annotation.models import CandidateSource, Dataset
from annotation.selectors_dataset import dataset_corpus_counts
from annotation.workspace import Action, Number, StepState, StepStatus, WorkspaceStep, workspace_memo
from core.selectors import job_params_q
from retrieval.job_params import BuildPoolsParams
from retrieval.selectors import dataset_pool_counts


def pools_state(dataset: Dataset) -> StepState:
    counts = workspace_memo(dataset, "corpus", lambda: dataset_corpus_counts(dataset=dataset))
    by_repository = dataset_pool_counts(dataset=dataset)
    by_source = counts["false_by_source"]
    numbers = [Number(f"pools from {r['repository__name']}", r["done"], of=counts["questions"]) for r in by_repository]
    numbers += [
        Number(f"{s.label} candidates", by_source.get(s.value, 0)) for s in CandidateSource if s.value in by_source
    ]
    failed = sum(r["failed"] for r in by_repository)
    if failed:
        numbers.append(Number("questions failed", failed))
    url = reverse("admin:annotation_dataset_pools", args=[dataset.pk])
    if not counts["questions"]:
        return StepState(StepStatus.WAITING, "Import dialogues first.", numbers)
    pooled = max((r["done"] for r in by_repository), default=0)
    review = Action(
        "Review the pools beside their dialogues",
        reverse("pool-review", args=[dataset.name]),
        "annotation.view_question",
        primary=False,
    )
    if pooled >= counts["questions"]:
        action = Action("Build pools again", url, "annotation.change_dataset", primary=False)
        return StepState(
            StepStatus.DONE, f"Every question has a candidate pool ({pooled:,}).", numbers, [review, action]
        )
    action = Action("Build candidate pools", url, "annotation.change_dataset")
    repository = Action(
        "Import an utterance repository",
        reverse("admin:retrieval_repository_import"),
        "annotation.add_repository",
        primary=False,
    )
    if pooled:
        return StepState(
            StepStatus.NEXT,
            f"{pooled:,} of {counts['questions']:,} questions have a pool{f'; {failed:,} failed' if failed else ''}: "
            "run the build again to finish (finished questions are skipped).",
            numbers,
            [action, review],
        )
    if counts["false_candidates"]:
        return StepState(
            StepStatus.OPTIONAL,
            f"The questions have {counts['false_candidates']:,} false candidates already (imported or generated); "
            "retrieved pools are optional.",
            numbers,
            [Action(action.label, url, action.permission, primary=False)],
        )
    return StepState(
        StepStatus.NEXT,
        "No candidate pools yet: retrieve utterances related to each ground truth from a repository "
        "(BM25 and embeddings).",
        numbers,
        [action, repository],
    )


def pools_jobs(dataset: Dataset):
    return job_params_q(kinds=[BuildPoolsParams.kind], key="dataset", value=dataset.name)


POOLS_STEP = WorkspaceStep("pools", 20, "Candidate pools", pools_state, pools_jobs)
