from .assignment import (
    DEFAULT_ERROR_LABELS,
    Assignment,
    AssignmentStatus,
    DatasetMembership,
    QualitySnapshot,
    QuestionWork,
)
from .corpus import Candidate, CandidateSource, Context, Dataset, Question, Turn
from .jobs import Job, JobKind, JobStatus, job_cache_key
from .release import TestSet, TestSetCandidate, TestSetQuestion
from .scoring import Annotator, AnnotatorProvider, FilterRules, Score

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
    "FilterRules",
    "Job",
    "JobKind",
    "JobStatus",
    "Question",
    "Score",
    "TestSet",
    "TestSetCandidate",
    "TestSetQuestion",
    "Turn",
    "job_cache_key",
]
