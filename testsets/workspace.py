"""The releases step of the dataset workspace (annotation.workspace), registered in apps.py."""

from django.urls import reverse

from annotation.models import Dataset
from annotation.workspace import Action, Number, StepState, StepStatus, WorkspaceStep, workspace_memo
from annotation.workspace_steps import preview_memo, preview_reason
from core.selectors import job_params_q
from testsets.job_params import BuildTestsetParams
from testsets.selectors import dataset_testsets


def releases_state(dataset: Dataset) -> StepState:
    total, rows = workspace_memo(dataset, "testsets", lambda: dataset_testsets(dataset=dataset))
    _, preview = preview_memo(dataset)
    build = reverse("admin:annotation_dataset_build", args=[dataset.pk])
    numbers = [Number("test sets", total)]
    buildable = (preview or {}).get("buildable_questions", 0)
    if total:
        return StepState(
            StepStatus.DONE,
            f"{total:,} test set{'s' if total != 1 else ''} built from this dataset; each is frozen with its scores "
            "and rules.",
            numbers,
            [Action("Build a test set (release)", build, "testsets.add_testset", primary=False)],
            rows=rows,
        )
    if buildable:
        return StepState(
            StepStatus.NEXT,
            f"The preview yields {buildable:,} questions: build a release.",
            numbers,
            [Action("Build a test set (release)", build, "testsets.add_testset")],
        )
    why = preview_reason(preview) if preview else "No filter preview yet: score the responses and refresh it."
    return StepState(StepStatus.WAITING, "No release yet.", numbers, blocked=why)


def releases_jobs(dataset: Dataset):
    return job_params_q(kinds=[BuildTestsetParams.kind], key="dataset", value=dataset.name)


RELEASES_STEP = WorkspaceStep(
    "releases", 70, "Releases (test sets)", releases_state, releases_jobs, template="dashboard/steps/_releases.html"
)
