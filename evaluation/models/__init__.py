from .campaigns import (
    Campaign,
    DecodingStrategy,
    GeneratedResponse,
    Generation,
    RandomTrialResult,
    ResponseRating,
)
from .systems import (
    CandidateResult,
    Evaluation,
    EvaluationStatus,
    QuestionResult,
    System,
    SystemDtype,
    SystemKind,
)

__all__ = [
    "Campaign",
    "CandidateResult",
    "DecodingStrategy",
    "Evaluation",
    "EvaluationStatus",
    "GeneratedResponse",
    "Generation",
    "QuestionResult",
    "RandomTrialResult",
    "ResponseRating",
    "System",
    "SystemDtype",
    "SystemKind",
]
