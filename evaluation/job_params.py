"""The evaluation app's job kinds and their typed parameters (core.job_registry).

All of them score or generate with a system's model: they go to the gpu queue (a worker without a
GPU runs them on its CPU).
"""

from dataclasses import dataclass
from typing import Any, ClassVar

from django.urls import reverse

from core.job_registry import JobParams, NextStep, param
from core.readable import count, interval, number


def _device():
    """The device parameter every kind of this app has; pages leave it to the worker."""
    return param(None, help="cuda, cuda:1, cpu (default: a GPU when there is one)", form=False)


def _run_id(what: str):
    """The row the job runs, created by the page or command that starts it."""
    return param(help=f"the {what} to run", form=False, command=False)


def _accuracy(result: dict[str, Any], n: int, unit: str) -> str:
    chance = f" (chance {number(result['chance'])})" if result.get("chance") is not None else ""
    return f"accuracy {number(result['accuracy'])} {interval(result.get('ci95'))}{chance} over {count(n)} {unit}"


@dataclass(frozen=True, kw_only=True)
class EvaluateParams(JobParams):
    kind: ClassVar[str] = "evaluate"
    label: ClassVar[str] = "evaluate a system on a test set"
    start_permission: ClassVar[str | None] = "evaluation.add_evaluation"
    queue: ClassVar[str] = "gpu"

    evaluation_id: int = _run_id("evaluation")
    batch_questions: int = param(256, help="questions per committed batch", form=False)
    device: str | None = _device()

    def summary(self, result: dict[str, Any]) -> str:
        return (
            f"{result['system']} on test set {result['testset']}: "
            f"{_accuracy(result, result['questions'], 'questions')} ({count(result['correct'])} right)."
        )

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return NextStep("Open the evaluation", reverse("admin:evaluation_evaluation_change", args=[self.evaluation_id]))


@dataclass(frozen=True, kw_only=True)
class EvaluatePairsParams(JobParams):
    kind: ClassVar[str] = "evaluate_pairs"
    label: ClassVar[str] = "evaluate a system on contrastive pairs"
    start_permission: ClassVar[str | None] = "evaluation.add_pairevaluation"
    queue: ClassVar[str] = "gpu"

    evaluation_id: int = _run_id("pair evaluation")  # a PairEvaluation
    batch_pairs: int = param(256, help="pairs per committed batch (two responses each)", form=False)
    device: str | None = _device()

    def summary(self, result: dict[str, Any]) -> str:
        return (
            f"{result['system']} on pair set {result['pair_set']}: "
            f"{_accuracy(result, result['n'], 'pairs')} ({count(result['correct'])} right)."
        )

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return NextStep(
            "Open the evaluation", reverse("admin:evaluation_pairevaluation_change", args=[self.evaluation_id])
        )


@dataclass(frozen=True, kw_only=True)
class GenerateParams(JobParams):
    kind: ClassVar[str] = "generate"
    label: ClassVar[str] = "generate responses with a system"
    start_permission: ClassVar[str | None] = "evaluation.add_generation"
    queue: ClassVar[str] = "gpu"

    generation_id: int = _run_id("generation")
    batch_size: int = param(32, help="contexts per batch (and per commit)", form=False)
    device: str | None = _device()

    def summary(self, result: dict[str, Any]) -> str:
        text = f"{result['system']} generated {count(result['responses'])} responses"
        if result.get("empty_responses"):
            text += f" ({count(result['empty_responses'])} empty)"
        return (
            f"{text}; {number(result.get('mean_words'), 1)} words on average, "
            f"distinct-1 {number(result.get('distinct_1'))}."
        )

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return NextStep("Open the generation", reverse("admin:evaluation_generation_change", args=[self.generation_id]))


@dataclass(frozen=True, kw_only=True)
class CampaignParams(JobParams):
    kind: ClassVar[str] = "campaign"
    label: ClassVar[str] = "run a campaign's RANDOM trials and report"
    start_permission: ClassVar[str | None] = "evaluation.change_campaign"
    queue: ClassVar[str] = "gpu"  # CHOSEN evaluations and RANDOM trials score with the systems

    campaign_id: int = _run_id("campaign")
    evaluate: bool = param(True, help="run the CHOSEN evaluations still missing", form=False, command=False)
    device: str | None = _device()

    def summary(self, result: dict[str, Any]) -> str:
        text = f"Campaign {result['campaign']}: {count(result['systems'])} systems on the leaderboard"
        random = result.get("random")
        if random:
            text += f"; {count(random['scored'])} RANDOM trials scored now, {count(random['skipped'])} done before"
        if result.get("notes"):
            text += f" ({count(len(result['notes']))} notes in the report)"
        return f"{text}."

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return NextStep(
            f"Open the report of {result['campaign']}", reverse("campaign-report", args=[result["campaign"]])
        )
