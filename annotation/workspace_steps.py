"""This app's steps of the dataset workspace (annotation.workspace): importing dialogues, opening
them for annotation, annotation itself and the filter preview (the releases: testsets.workspace)."""

from urllib.parse import urlencode

from django.urls import reverse

from annotation.job_params import ImportDialoguesParams, QualityRefreshParams
from annotation.models import Dataset, QualitySnapshot
from annotation.selectors_dataset import dataset_corpus_counts, dataset_progress, dataset_units_to_open
from annotation.workspace import Action, Number, StepState, StepStatus, WorkspaceStep, workspace_memo
from core.normalisers import DEFAULT_NORMALISER, normaliser_label
from core.selectors import job_params_q


def _import_url(dataset: Dataset) -> str:
    return reverse("admin:annotation_dataset_import_dialogues") + "?" + urlencode({"dataset": dataset.name})


def import_state(dataset: Dataset) -> StepState:
    counts = workspace_memo(dataset, "corpus", lambda: dataset_corpus_counts(dataset=dataset))
    numbers = [Number("dialogues", counts["dialogues"]), Number("questions", counts["questions"])]
    if counts["derived"]:
        numbers.append(Number("derived questions", counts["derived"]))
    if not counts["questions"]:
        return StepState(
            StepStatus.NEXT,
            "No dialogues yet: import a file of dialogues (DailyDialog, or JSON lines with a context and a "
            "response). Each dialogue becomes a question: its first turns the context, the next turn the "
            "ground truth.",
            numbers,
            [Action("Import dialogues", _import_url(dataset), "annotation.add_dataset")],
        )
    normaliser = normaliser_label(dataset.text_normaliser, dataset.text_normaliser_version)
    normalised = "" if dataset.text_normaliser == DEFAULT_NORMALISER else f" Texts normalised at import: {normaliser}."
    return StepState(
        StepStatus.DONE,
        f"{counts['questions']:,} questions from {counts['dialogues']:,} dialogues.{normalised}",
        numbers,
        [Action("Import more dialogues", _import_url(dataset), "annotation.add_dataset", primary=False)],
    )


# Job kinds that import questions into a dataset named by their "dataset" parameter: this app's,
# and those a higher app registers (testsets: a released test set imported as a dataset).
_import_kinds: list[str] = [ImportDialoguesParams.kind]


def dataset_import_kind_register(kind: str) -> None:
    if kind not in _import_kinds:
        _import_kinds.append(kind)


def import_jobs(dataset: Dataset):
    return job_params_q(kinds=list(_import_kinds), key="dataset", value=dataset.name)


def open_state(dataset: Dataset) -> StepState:
    counts = workspace_memo(dataset, "corpus", lambda: dataset_corpus_counts(dataset=dataset))
    to_open = dataset_units_to_open(dataset=dataset)
    units = counts["questions"] - to_open
    numbers = [Number("units of work", units, of=counts["questions"]), Number("questions to open", to_open)]
    if not counts["questions"]:
        return StepState(StepStatus.WAITING, "Import dialogues first.", numbers, blocked="No question to open yet.")
    if not dataset.is_rating and not counts["false_candidates"]:
        return StepState(
            StepStatus.WAITING,
            "No question has a false candidate yet: build candidate pools (or generate negatives) first, "
            "so that annotators score the ground truth and its candidates in one unit.",
            numbers,
            blocked="Nothing to open until the questions have candidates.",
        )
    if not to_open:
        return StepState(
            StepStatus.DONE,
            f"All {units:,} questions are units of work.",
            numbers,
            blocked="Nothing to open: every question is a unit already.",
        )
    action = Action(
        f"Open {to_open:,} questions for annotation",
        reverse("dashboard-open", args=[dataset.name]),
        "annotation.change_dataset",
        method="post",
    )
    return StepState(
        StepStatus.NEXT,
        f"{to_open:,} questions are not open for annotation yet: opening makes each a unit of work for "
        f"{dataset.annotators_per_item} annotators.",
        numbers,
        [action],
    )


def annotated_state(dataset: Dataset) -> StepState:
    p = workspace_memo(dataset, "progress", lambda: dataset_progress(dataset=dataset))
    snapshot, _ = preview_memo(dataset)
    p = {**p, "stopping": snapshot.data.get("stopping") if snapshot else None, "tolerance": dataset.stopping_tolerance}
    numbers = [
        Number("units done", p["units_done"], of=p["units"]),
        Number("scores", p["scores"], of=p["scores_planned"]),
        Number("being annotated now", p["assignments_leased"]),
        Number("units per hour", p["units_per_hour"]),
    ]
    actions = [
        Action("Invite annotators", "#annotators", "annotation.add_annotator"),
        Action("Import scores", reverse("admin:annotation_score_import"), "annotation.add_score", primary=False),
    ]
    if not p["units"]:
        return StepState(
            StepStatus.WAITING,
            "Open the questions for annotation first (or import scores given elsewhere).",
            numbers,
            actions[1:],
            extra={"progress": p},
        )
    if p["units_done"] == p["units"]:
        return StepState(
            StepStatus.DONE, f"Every unit is done: {p['scores']:,} scores.", numbers, actions[1:], extra={"progress": p}
        )
    eta = f" At {p['units_per_hour']:,} units an hour, about {p['eta_hours']} h left." if p["eta_hours"] else ""
    return StepState(
        StepStatus.NEXT,
        f"{p['units'] - p['units_done']:,} units still need scores.{eta} Invite annotators below, or import scores.",
        numbers,
        actions,
        extra={"progress": p},
    )


def preview_memo(dataset: Dataset) -> tuple[QualitySnapshot | None, dict | None]:
    """The dataset's newest quality snapshot and the filter preview it holds (once per page)."""
    snapshot = workspace_memo(dataset, "snapshot", QualitySnapshot.objects.filter(dataset=dataset).first)
    return snapshot, (snapshot.data.get("preview") if snapshot else None)


def preview_reason(preview: dict) -> str:
    """Why a preview yields no question (its undecided, rejected and too-thin counts)."""
    by_gt = preview.get("questions_by_ground_truth", {})
    parts = [
        f"{by_gt.get('undecided', 0):,} ground truths still undecided",
        f"{by_gt.get('rejected', 0):,} rejected",
        f"{preview.get('questions_too_few_false', 0):,} passed with too few kept false candidates "
        f"(fewer than {preview.get('false_per_question', 3)})",
    ]
    return "The filter preview yields no question: " + ", ".join(parts) + "."


def preview_state(dataset: Dataset) -> StepState:
    snapshot, preview = preview_memo(dataset)
    last_score = workspace_memo(dataset, "progress", lambda: dataset_progress(dataset=dataset))["last_score_at"]
    refresh = Action(
        "Refresh the preview", reverse("dashboard-refresh", args=[dataset.name]), "annotation.change_dataset", "post"
    )
    details = Action(
        "Filter preview & agreement",
        reverse("admin:annotation_dataset_preview", args=[dataset.pk]),
        "annotation.view_dataset",
        primary=False,
    )
    if last_score is None:
        return StepState(
            StepStatus.WAITING,
            "No scores yet: once responses are scored, the preview shows what the filter rules keep.",
            actions=[details],
        )
    if preview is None:
        return StepState(StepStatus.NEXT, "Not computed yet: refresh the preview.", actions=[refresh, details])
    by_gt, by_decision = preview["questions_by_ground_truth"], preview["candidates_by_decision"]
    numbers = [
        Number("questions a test set would have", preview["buildable_questions"]),
        Number("of them derived", preview["buildable_derived_questions"]),
        Number("ground truths passed", by_gt.get("passed", 0)),
        Number("rejected", by_gt.get("rejected", 0)),
        Number("undecided", by_gt.get("undecided", 0)),
        Number("false candidates kept", by_decision.get("kept", 0)),
        Number("dropped as acceptable", by_decision.get("acceptable", 0)),
        Number("dropped as ungrammatical", by_decision.get("ungrammatical", 0)),
        Number("still open", by_decision.get("undecided", 0)),
    ]
    stale = last_score > snapshot.computed_at
    as_of = f"As of {snapshot.computed_at:%Y-%m-%d %H:%M}" + (" (scores arrived since: refresh)." if stale else ".")
    by_source = snapshot.data.get("verdicts_by_source") or []  # snapshots from before have none
    if not preview["buildable_questions"]:
        return StepState(
            StepStatus.NEXT if stale else StepStatus.WAITING,
            f"{preview_reason(preview)} {as_of}",
            numbers,
            [refresh, details],
            rows=by_source,
        )
    return StepState(
        StepStatus.DONE,
        f"A test set built now would have {preview['buildable_questions']:,} questions. {as_of}",
        numbers,
        [Action(refresh.label, refresh.url, refresh.permission, "post", primary=stale), details],
        rows=by_source,
    )


def preview_jobs(dataset: Dataset):
    return job_params_q(kinds=[QualityRefreshParams.kind], key="dataset_id", value=dataset.pk)


STEPS = [
    WorkspaceStep("import", 10, "Dialogues imported", import_state, import_jobs),
    WorkspaceStep("open", 40, "Open for annotation", open_state, rating=True),
    WorkspaceStep(
        "annotated", 50, "Annotated", annotated_state, template="dashboard/steps/_annotated.html", rating=True
    ),
    WorkspaceStep(
        "preview",
        60,
        "Test set yield (filter preview)",
        preview_state,
        preview_jobs,
        template="dashboard/steps/_preview.html",
    ),
]
