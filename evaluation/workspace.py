"""The evaluations step of the dataset workspace (annotation.workspace), registered in apps.py."""

from urllib.parse import urlencode

from django.db.models import Q
from django.urls import reverse

from annotation.models import Dataset
from annotation.workspace import Action, Number, StepState, StepStatus, WorkspaceStep, workspace_memo
from core.toy_models import TOY_PURPOSE
from evaluation.models import Evaluation, EvaluationStatus
from evaluation.selectors import dataset_evaluations
from evaluation.selectors_campaign import dataset_campaigns
from testsets.selectors import dataset_testsets


def evaluations_state(dataset: Dataset) -> StepState:
    testsets, newest = workspace_memo(dataset, "testsets", lambda: dataset_testsets(dataset=dataset))
    by_status, rows = dataset_evaluations(dataset=dataset)
    numbers = [Number(f"evaluations {s.label}", by_status[s.value]) for s in EvaluationStatus if s.value in by_status]
    if not testsets:
        return StepState(StepStatus.WAITING, "Build a release first: systems are evaluated on a test set.", numbers)
    url = reverse("admin:evaluation_evaluation_add") + "?" + urlencode({"testset": newest[0]["pk"]})
    rows = [{**r, "url": reverse("admin:evaluation_evaluation_change", args=[r["pk"]])} for r in rows]
    if not by_status:
        return StepState(
            StepStatus.NEXT,
            f"No evaluation yet: score a registered system on {newest[0]['name']} (selection accuracy).",
            numbers,
            [Action("Evaluate a system", url, "evaluation.add_evaluation")],
        )
    done = by_status.get(EvaluationStatus.SUCCEEDED, 0)
    toys = sorted({r["system"] for r in rows if r["toy_model"]})
    return StepState(
        StepStatus.DONE if done else StepStatus.NEXT,
        f"{done:,} evaluations finished on this dataset's test sets.",
        numbers,
        [Action("Evaluate a system", url, "evaluation.add_evaluation", primary=False)],
        rows=rows,
        extra={"toy_model": f"{', '.join(toys)}: {TOY_PURPOSE}."} if toys else {},
    )


def evaluations_jobs(dataset: Dataset) -> Q:
    """Evaluate jobs name their evaluation, which names the test set: the jobs the evaluations record."""
    return Q(pk__in=Evaluation.objects.filter(testset__dataset=dataset, job__isnull=False).values("job_id"))


EVALUATIONS_STEP = WorkspaceStep(
    "evaluations",
    80,
    "Evaluations",
    evaluations_state,
    evaluations_jobs,
    template="dashboard/steps/_evaluations.html",
)


def campaigns_state(dataset: Dataset) -> StepState:
    testsets, _ = workspace_memo(dataset, "testsets", lambda: dataset_testsets(dataset=dataset))
    total, rows = dataset_campaigns(dataset=dataset)
    action = Action(
        "Start a campaign",
        reverse("campaign-new") + "?" + urlencode({"dataset": dataset.name}),
        "evaluation.add_campaign",
        primary=not total,
    )
    rows = [{**r, "url": reverse("campaign-report", args=[r["name"]])} for r in rows]
    numbers = [Number("campaigns", total), Number("with a report", sum(1 for r in rows if r["report_at"]))]
    if not testsets and not total:
        return StepState(
            StepStatus.WAITING,
            "Build a release (or contrastive pairs) first: a campaign ranks systems on them.",
            numbers[:1],
            [action],
        )
    if not total:
        return StepState(
            StepStatus.NEXT,
            "No campaign yet: rank the registered systems on a test set (CHOSEN), on random candidates "
            "(RANDOM) and on pairs, and check the ranking against human ratings.",
            numbers[:1],
            [action],
        )
    reported = any(r["report_at"] for r in rows)
    return StepState(
        StepStatus.DONE if reported else StepStatus.NEXT,
        f"{total:,} campaign{'s' if total != 1 else ''} on this dataset's releases.",
        numbers,
        [action],
        rows=rows,
    )


def campaigns_jobs(dataset: Dataset) -> Q:
    """A campaign names its latest job."""
    from evaluation.models import Campaign

    return Q(
        pk__in=Campaign.objects.filter(
            Q(testset__dataset=dataset) | Q(pair_set__dataset=dataset), job__isnull=False
        ).values("job_id")
    )


CAMPAIGNS_STEP = WorkspaceStep(
    "campaigns",
    90,
    "Campaigns",
    campaigns_state,
    campaigns_jobs,
    template="dashboard/steps/_campaigns.html",
)
