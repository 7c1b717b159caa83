from .campaign import Campaign, RandomTrialResult
from .evaluation import CandidateResult, Evaluation, QuestionResult
from .generation import DecodingStrategy, GeneratedResponse, Generation, ResponseRating
from .pair_evaluation import PairEvaluation, PairResult
from .system import ContextForm, System, SystemDtype, SystemKind
from .system_run import EvaluationStatus, ScoringRun, SystemRun

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
    "ScoringRun",
    "System",
    "SystemDtype",
    "SystemKind",
    "SystemRun",
]
