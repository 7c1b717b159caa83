"""What the audit reads: each question's candidates (texts only, no context) and which is the
ground truth. Built by testsets.selectors from a dataset's pools or a test set's items."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pool:
    question_id: int
    texts: tuple[str, ...]
    label: int  # index of the ground truth in ``texts``

    def __post_init__(self) -> None:
        if not 0 <= self.label < len(self.texts):
            raise ValueError(f"question {self.question_id}: ground truth index {self.label} out of range")
