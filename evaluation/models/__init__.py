from .campaigns import (
    Campaign,
    DecodingStrategy,
    GeneratedResponse,
    Generation,
    RandomTrialResult,
    ResponseRating,
)
from .pairs import PairEvaluation, PairResult
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
    "PairEvaluation",
    "PairResult",
    "QuestionResult",
    "RandomTrialResult",
    "ResponseRating",
    "System",
    "SystemDtype",
    "SystemKind",
]
