"""Adaptive stopping, simulated on fully annotated data: annotators arrive one after another and
each scores only the responses whose decision is still open (Sato et al.'s rules).
"""

from dataclasses import dataclass

from annotation.rules import (
    FalseDecision,
    GroundTruthDecision,
    ScoreCounts,
    Thresholds,
    decide_false_candidate,
    decide_ground_truth,
)


def _counts(values: list[int], rules: Thresholds) -> ScoreCounts:
    return ScoreCounts(
        scores=len(values),
        acceptable=sum(v >= rules.acceptable_min_score for v in values),
        ungrammatical=sum(v <= rules.ungrammatical_max_score for v in values),
        low=sum(v <= rules.ground_truth_low_max_score for v in values),
    )


def decisions(values_per_response: list[list[int]], rules: Thresholds, planned: int) -> tuple:
    """(ground-truth decision, false-candidate decisions) from the scores seen so far."""
    gt = decide_ground_truth(_counts(values_per_response[0], rules), rules, planned)
    false = tuple(decide_false_candidate(_counts(v, rules), rules, planned) for v in values_per_response[1:])
    return gt, false


@dataclass
class SimulationResult:
    questions: int = 0
    scores_full: int = 0
    scores_adaptive: int = 0
    decisions_compared: int = 0
    decisions_equal: int = 0
    questions_closed_early: int = 0

    @property
    def saved(self) -> float:
        return 1 - self.scores_adaptive / self.scores_full if self.scores_full else 0.0


def simulate(questions: list[list[list[int]]], rules: Thresholds, planned: int = 5) -> SimulationResult:
    """``questions``: per question, [ground-truth scores, candidate 1 scores, ...] in annotator order.

    Annotator i scores only the responses still open after annotators 0..i-1 (none at all once
    the ground truth is rejected). Every final decision is compared with the decision made on
    all the scores; for a dropped question only the question-level decision matters.
    """
    result = SimulationResult()
    for responses in questions:
        result.questions += 1
        result.scores_full += sum(len(v) for v in responses)
        seen: list[list[int]] = [[] for _ in responses]
        for annotator in range(planned):
            gt, false = decisions(seen, rules, planned)
            if gt == GroundTruthDecision.REJECTED:
                break
            open_rows = [0] if gt == GroundTruthDecision.UNDECIDED else []
            open_rows += [i + 1 for i, d in enumerate(false) if d == FalseDecision.UNDECIDED]
            if not open_rows:
                result.questions_closed_early += 1
                break
            for row in open_rows:
                if annotator < len(responses[row]):
                    seen[row].append(responses[row][annotator])
                    result.scores_adaptive += 1
        final_gt, final_false = decisions(seen, rules, planned)
        full_gt, full_false = decisions(responses, rules, planned)
        result.decisions_compared += 1
        result.decisions_equal += final_gt == full_gt
        if full_gt != GroundTruthDecision.REJECTED:
            result.decisions_compared += len(full_false)
            result.decisions_equal += sum(a == b for a, b in zip(final_false, full_false, strict=True))
    return result
