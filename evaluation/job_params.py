"""The evaluation app's job kinds and their typed parameters (core.job_registry).

All of them score or generate with a system's model: they go to the gpu queue (a worker without a
GPU runs them on its CPU).
"""

from dataclasses import dataclass
from typing import ClassVar

from core.job_registry import JobParams


@dataclass(frozen=True, kw_only=True)
class EvaluateParams(JobParams):
    kind: ClassVar[str] = "evaluate"
    label: ClassVar[str] = "evaluate a system on a test set"
    queue: ClassVar[str] = "gpu"

    evaluation_id: int
    batch_questions: int = 256  # questions per committed batch
    device: str | None = None  # cuda, cuda:1, cpu; None: a GPU when there is one


@dataclass(frozen=True, kw_only=True)
class EvaluatePairsParams(JobParams):
    kind: ClassVar[str] = "evaluate_pairs"
    label: ClassVar[str] = "evaluate a system on contrastive pairs"
    queue: ClassVar[str] = "gpu"

    evaluation_id: int  # a PairEvaluation
    batch_pairs: int = 256  # pairs per committed batch (two responses each)
    device: str | None = None


@dataclass(frozen=True, kw_only=True)
class GenerateParams(JobParams):
    kind: ClassVar[str] = "generate"
    label: ClassVar[str] = "generate responses with a system"
    queue: ClassVar[str] = "gpu"

    generation_id: int
    batch_size: int = 32  # contexts per batch (and per commit)
    device: str | None = None


@dataclass(frozen=True, kw_only=True)
class CampaignParams(JobParams):
    kind: ClassVar[str] = "campaign"
    label: ClassVar[str] = "run a campaign's RANDOM trials and report"
    queue: ClassVar[str] = "gpu"  # CHOSEN evaluations and RANDOM trials score with the systems

    campaign_id: int
    evaluate: bool = True  # run the CHOSEN evaluations still missing
    device: str | None = None
