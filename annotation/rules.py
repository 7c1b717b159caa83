"""The filter rules of Sato et al. §3.1 and the question plan of §3.2, as pure functions.

Scores are counted in the database (selectors); these functions turn counts into
decisions. A decision is final as soon as the remaining planned annotators could no
longer change it, which is what adaptive stopping relies on.
"""

import random
from collections.abc import Container, Mapping, Sequence
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


def plan_orders(pool: QuestionPool, rng: random.Random | None = None) -> tuple[list[int], list[int]]:
    """The pool's kept false candidates and its acceptable candidates in the order the plan takes
    them: by id, or as ``rng`` shuffles them (kept first, then acceptable)."""
    kept = sorted(pool.kept)
    acceptable = sorted(pool.acceptable_as_ground_truth)
    if rng is not None:
        rng.shuffle(kept)
        rng.shuffle(acceptable)
    return kept, acceptable


def derived_count(*, kept: int, acceptable: int, false_per_question: int) -> int:
    """How many derived questions a pool with ``kept`` false and ``acceptable`` candidates yields."""
    k = false_per_question
    return 0 if kept < 2 * k else min(acceptable, (kept - k) // k)


def plan_questions(
    pool: QuestionPool,
    *,
    false_per_question: int,
    rng: random.Random | None = None,
    choice: Mapping[int, Sequence[int]] | None = None,
    drop: Container[int] = (),
) -> list[PlannedQuestion]:
    """Questions a pool yields: the original with k false candidates and, when at least 2k
    false candidates survive, one extra question per acceptable candidate (as ground truth)
    while k unused false candidates remain. Without ``rng`` the choice is in id order.

    ``choice``: per ground truth (the original's or an acceptable one's), the k false candidates it
    takes when they are still unused (a shortcut-aware choice); ``drop``: ground truths whose
    question is left out (an original's: the pool yields nothing; a derived one's: its false
    candidates are used up all the same, so the later questions are those the choice planned)."""
    k = false_per_question
    if pool.ground_truth != GroundTruthDecision.PASSED or pool.ground_truth_id is None or len(pool.kept) < k:
        return []
    if pool.ground_truth_id in drop:
        return []
    kept, acceptable = plan_orders(pool, rng)
    choice = choice or {}

    def take(ground_truth_id: int, unused: list[int]) -> tuple[list[int], list[int]]:
        wanted = [i for i in choice.get(ground_truth_id, ()) if i in unused]
        if len(wanted) == k:
            return wanted, [i for i in unused if i not in wanted]
        return unused[:k], unused[k:]

    false, unused = take(pool.ground_truth_id, kept)
    planned = [PlannedQuestion(pool.ground_truth_id, tuple(false), derived=False)]
    if len(kept) >= 2 * k:
        for ground_truth_id in acceptable:
            if len(unused) < k:
                break
            false, unused = take(ground_truth_id, unused)
            if ground_truth_id not in drop:
                planned.append(PlannedQuestion(ground_truth_id, tuple(false), derived=True))
    return planned
