"""Per-annotator quality measures, computed from scores without hand-made gold answers."""

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from statistics import median


@dataclass
class AnnotatorQuality:
    annotator_id: int
    label: str
    blocked: bool
    excluded: bool
    units: int = 0
    scores: int = 0
    checks: int = 0
    checks_passed: int = 0
    ground_truths: int = 0
    ground_truths_ok: int = 0
    loo_compared: int = 0
    loo_agree: int = 0
    seconds_per_response: float | None = None
    identical_units: int = 0
    flags: list[str] = field(default_factory=list)

    @property
    def check_pass_rate(self) -> float | None:
        return self.checks_passed / self.checks if self.checks else None

    @property
    def ground_truth_ok(self) -> float | None:
        return self.ground_truths_ok / self.ground_truths if self.ground_truths else None

    @property
    def loo_agreement(self) -> float | None:
        return self.loo_agree / self.loo_compared if self.loo_compared else None

    @property
    def identical_share(self) -> float | None:
        return self.identical_units / self.units if self.units else None

    def as_dict(self) -> dict:
        data = asdict(self)
        data.update(
            check_pass_rate=self.check_pass_rate,
            ground_truth_ok=self.ground_truth_ok,
            loo_agreement=self.loo_agreement,
            identical_share=self.identical_share,
        )
        return data


def leave_one_out_agreement(scores_by_item: dict[int, list[tuple[int, int]]]) -> dict[int, tuple[int, int]]:
    """For each annotator: (scores compared, scores within 1 of the median of the item's other scores).
    Items need at least two other scores for a median worth comparing with."""
    result: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for pairs in scores_by_item.values():
        if len(pairs) < 3:
            continue
        for i, (annotator, value) in enumerate(pairs):
            others = [v for j, (_, v) in enumerate(pairs) if j != i]
            entry = result[annotator]
            entry[0] += 1
            entry[1] += abs(value - median(others)) <= 1
    return {annotator: (c, a) for annotator, (c, a) in result.items()}


def flag(quality: AnnotatorQuality, thresholds: dict) -> list[str]:
    if quality.units < thresholds["min_units"]:
        return []
    flags = []
    if quality.check_pass_rate is not None and quality.check_pass_rate < thresholds["check_pass_rate_min"]:
        flags.append("fails attention checks")
    if quality.ground_truth_ok is not None and quality.ground_truth_ok < thresholds["ground_truth_ok_min"]:
        flags.append("scores ground truths low")
    if quality.loo_agreement is not None and quality.loo_agreement < thresholds["loo_agreement_min"]:
        flags.append("disagrees with the others")
    if (
        quality.seconds_per_response is not None
        and quality.seconds_per_response < thresholds["seconds_per_response_min"]
    ):
        flags.append("too fast")
    if quality.identical_share is not None and quality.identical_share > thresholds["identical_units_max"]:
        flags.append("same score for everything")
    return flags
