"""The filter rules of Sato et al. §3.1 and the question plan of §3.2, as pure functions.

Scores are counted in the database (selectors); these functions turn counts into
decisions. A decision is final as soon as the remaining planned annotators could no
longer change it, which is what adaptive stopping relies on.
"""

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

# False candidates per question of a test set (Sato et al.: 3): the filter preview's default, and
# the test-set build's (testsets.job_params.BuildTestsetParams).
FALSE_PER_QUESTION = 3


class Thresholds(Protocol):
    acceptable_min_score: int
    acceptable_min_count: int
    ungrammatical_max_score: int
    ungrammatical_min_count: int
    ground_truth_low_max_score: int
    ground_truth_low_min_count: int


class FalseDecision(StrEnum):
    KEPT = "kept"  # a usable false candidate
    ACCEPTABLE = "acceptable"  # dropped: enough annotators found it an appropriate response
    UNGRAMMATICAL = "ungrammatical"  # dropped: enough annotators found it not a sentence
    UNDECIDED = "undecided"  # more scores could still change the outcome


class GroundTruthDecision(StrEnum):
    PASSED = "passed"
    REJECTED = "rejected"  # the question is dropped
    UNDECIDED = "undecided"


@dataclass(frozen=True, slots=True)
class ScoreCounts:
    scores: int  # how many (non-excluded) annotators scored it
    acceptable: int  # scores >= acceptable_min_score
    ungrammatical: int  # scores <= ungrammatical_max_score
    low: int  # scores <= ground_truth_low_max_score


def decide_false_candidate(counts: ScoreCounts, rules: Thresholds, planned: int) -> FalseDecision:
    if counts.ungrammatical >= rules.ungrammatical_min_count:
        return FalseDecision.UNGRAMMATICAL
    if counts.acceptable >= rules.acceptable_min_count:
        return FalseDecision.ACCEPTABLE
    remaining = max(planned - counts.scores, 0)
    if (
        counts.acceptable + remaining < rules.acceptable_min_count
        and counts.ungrammatical + remaining < rules.ungrammatical_min_count
    ):
        return FalseDecision.KEPT
    return FalseDecision.UNDECIDED


def decide_ground_truth(counts: ScoreCounts, rules: Thresholds, planned: int) -> GroundTruthDecision:
    if counts.low >= rules.ground_truth_low_min_count:
        return GroundTruthDecision.REJECTED
    remaining = max(planned - counts.scores, 0)
    if counts.low + remaining < rules.ground_truth_low_min_count:
        return GroundTruthDecision.PASSED
    return GroundTruthDecision.UNDECIDED


@dataclass(slots=True)
class QuestionPool:
    """Decisions for one original question's ground truth and candidates."""

    question_id: int
    ground_truth_id: int | None = None
    ground_truth: GroundTruthDecision = GroundTruthDecision.UNDECIDED
    kept: list[int] = field(default_factory=list)
    # Dropped as acceptable and, scored as a ground truth, passing the ground-truth rule:
    # these may be the ground truth of a derived question (§3.2).
    acceptable_as_ground_truth: list[int] = field(default_factory=list)
    decisions: dict[str, int] = field(default_factory=dict)  # FalseDecision -> count


@dataclass(frozen=True, slots=True)
class PlannedQuestion:
    ground_truth_id: int
    false_ids: tuple[int, ...]
    derived: bool


def plan_questions(
    pool: QuestionPool,
    *,
    false_per_question: int,
    rng: random.Random | None = None,
    preferred: Sequence[int] | None = None,
) -> list[PlannedQuestion]:
    """Questions a pool yields: the original with k false candidates and, when at least 2k
    false candidates survive, one extra question per acceptable candidate (as ground truth)
    while k unused false candidates remain. Without ``rng`` the choice is in id order;
    ``preferred``: kept false candidates that go first, in that order (a shortcut-aware choice),
    the others after them as ``rng`` draws them."""
    k = false_per_question
    if pool.ground_truth != GroundTruthDecision.PASSED or pool.ground_truth_id is None or len(pool.kept) < k:
        return []
    kept = sorted(pool.kept)
    acceptable = sorted(pool.acceptable_as_ground_truth)
    if rng is not None:
        rng.shuffle(kept)
        rng.shuffle(acceptable)
    if preferred is not None:
        kept_set = set(kept)
        first = [i for i in preferred if i in kept_set]
        taken = set(first)
        kept = first + [i for i in kept if i not in taken]
    planned = [PlannedQuestion(pool.ground_truth_id, tuple(kept[:k]), derived=False)]
    unused = kept[k:]
    if len(kept) >= 2 * k:
        for ground_truth_id in acceptable:
            if len(unused) < k:
                break
            planned.append(PlannedQuestion(ground_truth_id, tuple(unused[:k]), derived=True))
            unused = unused[k:]
    return planned
