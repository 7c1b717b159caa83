from .campaign import (
    Campaign,
    DecodingStrategy,
    GeneratedResponse,
    Generation,
    RandomTrialResult,
    ResponseRating,
)
from .pair_evaluation import PairEvaluation, PairResult
from .system import (
    CandidateResult,
    ContextForm,
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
    "ContextForm",
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
