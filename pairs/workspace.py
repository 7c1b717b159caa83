"""The contrastive-pairs step of the dataset workspace (annotation.workspace), registered in apps.py."""

from django.urls import reverse

from annotation.models import Dataset
from annotation.selectors_dataset import dataset_corpus_counts
from annotation.workspace import Action, Number, StepState, StepStatus, WorkspaceStep, workspace_memo
from core.selectors import job_params_q
from pairs.job_params import BuildPairsParams
from pairs.selectors import dataset_pair_sets


def pairs_state(dataset: Dataset) -> StepState:
    sets = dataset_pair_sets(dataset=dataset)
    numbers = [
        Number("pair sets", len(sets)),
        Number("pairs", sum(s["n_pairs"] for s in sets)),
        Number("accepted", sum(s["accepted"] for s in sets)),
        Number("waiting for review", sum(s["pending"] for s in sets)),
    ]
    rows = [{**s, "url": reverse("pairs-review", args=[s["name"]])} for s in sets]
    build = Action(
        "Build contrastive pairs",
        reverse("admin:annotation_dataset_pairs", args=[dataset.pk]),
        "annotation.change_dataset",
        primary=False,
    )
    if not sets and not workspace_memo(dataset, "corpus", lambda: dataset_corpus_counts(dataset=dataset))["questions"]:
        return StepState(StepStatus.WAITING, "Import dialogues first: pairs are made from the ground truths.", numbers)
    if not sets:
        return StepState(
            StepStatus.OPTIONAL,
            "Optional: contrastive pairs (a ground truth and a minimal edit of it, Okano et al.) evaluate systems "
            "beside the test set; they need no annotation.",
            numbers,
            [build],
        )
    pending = sum(s["pending"] for s in sets)
    summary = (
        f"{pending:,} pair{'s wait' if pending != 1 else ' waits'} for review."
        if pending
        else "Every pair is reviewed."
    )
    return StepState(StepStatus.DONE, summary, numbers, [build], rows=rows)


def pairs_jobs(dataset: Dataset):
    return job_params_q(kinds=[BuildPairsParams.kind], key="dataset", value=dataset.name)


PAIRS_STEP = WorkspaceStep(
    "pairs", 27, "Contrastive pairs", pairs_state, pairs_jobs, template="dashboard/steps/_pairs.html"
)
