from .assignment import (
    DEFAULT_ERROR_LABELS,
    Assignment,
    AssignmentStatus,
    DatasetMembership,
    QualitySnapshot,
    QuestionWork,
)
from .corpus import Candidate, CandidateSource, Context, Dataset, DatasetTask, Question, Turn
from .invitation import Invitation
from .repository import Repository, Utterance
from .scoring import Annotator, AnnotatorProvider, FilterRules, Score, ScoreRevision, counted_scores_q

__all__ = [
    "DEFAULT_ERROR_LABELS",
    "Assignment",
    "AssignmentStatus",
    "DatasetMembership",
    "QualitySnapshot",
    "QuestionWork",
    "Annotator",
    "AnnotatorProvider",
    "Candidate",
    "CandidateSource",
    "Context",
    "Dataset",
    "DatasetTask",
    "FilterRules",
    "Invitation",
    "Question",
    "Repository",
    "Score",
    "ScoreRevision",
    "Turn",
    "Utterance",
    "counted_scores_q",
]
