"""The steps of the dataset workspace (annotation.workspace) that this app adds, registered in apps.py:
the shortcut audit of the pools, and the releases."""

from django.urls import reverse

from annotation.models import Dataset
from annotation.selectors_dataset import dataset_corpus_counts
from annotation.workspace import Action, Number, StepState, StepStatus, WorkspaceStep, workspace_memo
from annotation.workspace_steps import preview_memo, preview_reason
from core.selectors import job_params_q
from testsets.job_params import AuditShortcutsParams, BuildTestsetParams
from testsets.selectors import dataset_testsets, shortcut_audit_latest
from testsets.shortcuts.audit import audit_flagged
from testsets.shortcuts.report import shortcut_rows


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


def shortcuts_state(dataset: Dataset) -> StepState:
    """The newest audit of the dataset's pools (stored by the audit job: the page computes nothing)."""
    counts = workspace_memo(dataset, "corpus", lambda: dataset_corpus_counts(dataset=dataset))
    audit = shortcut_audit_latest(dataset=dataset)
    url = reverse("admin:annotation_dataset_shortcut-audit", args=[dataset.pk])
    if audit is None:
        if not counts["false_candidates"]:
            return StepState(StepStatus.WAITING, "No audit yet.", blocked="The questions have no false candidates yet.")
        return StepState(
            StepStatus.OPTIONAL,
            "Not audited yet: check that the ground truth cannot be told from the false candidates without the "
            "context (by its length, style or words) before the pools are annotated.",
            actions=[Action("Audit the pools", url, "testsets.add_shortcutaudit")],
        )
    result = audit.result
    flagged = audit_flagged(result)
    as_of = f"Audit of {audit.created_at:%Y-%m-%d %H:%M}"
    summary = (
        f"{as_of}: {len(flagged)} context-free "
        f"{'baselines pick' if len(flagged) != 1 else 'baseline picks'} the ground truth above chance; the pools "
        "carry a shortcut."
        if flagged
        else f"{as_of}: every context-free baseline is within chance."
    )
    return StepState(
        StepStatus.DONE,
        summary,
        [Number("questions audited", result["questions"]), Number("chance", result["chance"], format="percent")],
        [Action("Audit again", url, "testsets.add_shortcutaudit", primary=False)],
        rows=shortcut_rows(result),
    )


def shortcuts_jobs(dataset: Dataset):
    return job_params_q(kinds=[AuditShortcutsParams.kind], key="dataset", value=dataset.name)


SHORTCUTS_STEP = WorkspaceStep(
    "shortcuts",
    30,
    "Shortcut audit (context-free baselines)",
    shortcuts_state,
    shortcuts_jobs,
    template="dashboard/steps/_shortcuts.html",
)
