"""The steps of a dataset's workspace (``/dashboard/<name>/``): the pipeline from import to release
and evaluation, each step with its state, its numbers, the action that comes next and its jobs.

Steps of this app (import, opening work, annotation, filter preview, releases) are registered from
its ``AppConfig.ready()``; a higher app (retrieval: pools; negatives; pairs; evaluation) registers
its own the same way, so this app never imports it (like ``annotation.admin.dataset_tools``). A
step's ``state`` reads its numbers through selectors: aggregate queries whose number does not grow
with the dataset.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from annotation.models import Dataset


class StepStatus:
    DONE = "done"
    NEXT = "next"  # what the researcher can do now
    WAITING = "waiting"  # needs an earlier step first
    OPTIONAL = "optional"  # may be done now, nothing later needs it


@dataclass(frozen=True)
class Number:
    label: str
    value: Any
    format: str = "count"  # the template filter that shows it: count, num, percent, duration, text
    of: Any = None  # "value of total" (a count)


@dataclass(frozen=True)
class Action:
    """A link (``method`` get) or a button posting to ``url``; shown to accounts with ``permission``."""

    label: str
    url: str
    permission: str
    method: str = "get"
    primary: bool = True


@dataclass
class StepState:
    status: str
    summary: str  # what the step's numbers mean now, or what to do (an empty step says what to do)
    numbers: list[Number] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    blocked: str = ""  # why the step's action is not offered now
    rows: list[dict] = field(default_factory=list)  # a short list (test sets, evaluations) for the step's template
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class WorkspaceStep:
    key: str  # the step's id in the page (``step-<key>``)
    order: int  # place in the pipeline
    title: str
    state: Callable[[Dataset], StepState]
    # The jobs of this step for a dataset (core.selectors.job_params_q or a Q on recorded job ids);
    # None: the step starts no job.
    jobs: Callable[[Dataset], Q] | None = None
    template: str = "dashboard/steps/_step.html"
    rating: bool = False  # shown on a rating dataset too (most steps build toward a test set)


_steps: dict[str, WorkspaceStep] = {}


def workspace_step_register(step: WorkspaceStep) -> None:
    _steps[step.key] = step


def workspace_steps(*, dataset: Dataset) -> list[WorkspaceStep]:
    """The steps that apply to the dataset, in pipeline order."""
    return sorted(
        (s for s in _steps.values() if s.rating or not dataset.is_rating),
        key=lambda s: (s.order, s.key),
    )


@dataclass
class StepView:
    step: WorkspaceStep
    state: StepState
    job: Any = None  # the newest of the step's jobs (core.models.Job), if any


def workspace_read(*, dataset: Dataset, can: Callable[[str], bool]) -> tuple[list[StepView], Q]:
    """Every step's state for the dataset, with the actions ``can`` (a permission check) allows and
    the step's newest job; and the Q of all the steps' jobs (the page's jobs panel).

    A fixed number of queries per step, none per question or job."""
    from core.selectors import jobs_latest_by

    steps = workspace_steps(dataset=dataset)
    matches = {step.key: step.jobs(dataset) for step in steps if step.jobs is not None}
    latest = jobs_latest_by(groups=matches)
    views, all_jobs = [], Q()
    for match in matches.values():
        all_jobs |= match
    for step in steps:
        state = step.state(dataset)
        state.actions = [a for a in state.actions if can(a.permission)]
        views.append(StepView(step=step, state=state, job=latest.get(step.key)))
    return views, all_jobs


def workspace_memo(dataset: Dataset, key: str, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per dataset object: steps that read the same numbers (the questions, the
    quality snapshot) share one query within a page."""
    memo = dataset.__dict__.setdefault("_workspace_memo", {})
    if key not in memo:
        memo[key] = compute()
    return memo[key]
