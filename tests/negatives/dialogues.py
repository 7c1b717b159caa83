"""Dialogue text for the negatives tests: DailyDialog's file format, read and written."""

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DialogueText:
    source: str  # "dailydialog" or "test texts"
    dialogues: list[list[str]]  # training dialogues, turn by turn
    held_out: list[str]  # utterances no training text comes from

    @property
    def utterances(self) -> list[str]:
        return [turn for dialogue in self.dialogues for turn in dialogue]


def read_dailydialog(path: Path) -> list[list[str]]:
    """DailyDialog's format: a dialogue a line, turns separated by ``__eou__``."""
    with open(path, encoding="utf-8") as handle:
        return [[t.strip() for t in line.split("__eou__") if t.strip()] for line in handle if line.strip()]


def write_dailydialog(path: Path, dialogues: list[list[str]]) -> Path:
    path.write_text("".join(" __eou__ ".join(d) + " __eou__\n" for d in dialogues), encoding="utf-8")
    return path
