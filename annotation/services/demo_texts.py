"""The dialogues the demo's toy models are trained on (negatives' masked LM, evaluation's causal
system): the demo dialogues, then DailyDialog's training dialogues when the real corpora are next
to the project (WELLCHOSEN_SHARED_DATA), read as a stream and cut at a number of characters so that
the training stays within a minute."""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from .demo import DEMO_DIR

DAILYDIALOG_TRAIN = Path("dailydialog") / "train" / "dialogues_train.txt"
_EOU = "__eou__"
# DailyDialog is tokenized with spaces before punctuation ("Say , Jim , how about ... ?") and
# around some apostrophes ("Let ' s"); the demo texts are written normally, and so is what a
# model is asked to score, so the spaces go.
_SPACE_BEFORE_PUNCTUATION = re.compile(r" +([,.!?;:%)])")
_SPACE_AFTER_PARENTHESIS = re.compile(r"\( +")
_SPACED_APOSTROPHE = re.compile(r"(\w) ?' ?(s|t|m|re|ve|ll|d)\b")


@dataclass(frozen=True)
class DemoTexts:
    """Dialogues (lists of turns) and how many came from each source."""

    dialogues: list[list[str]]
    sources: dict[str, int]

    @property
    def chars(self) -> int:
        return sum(len(turn) for dialogue in self.dialogues for turn in dialogue)


def demo_training_dialogues(*, max_chars: int) -> DemoTexts:
    """The demo dialogues, then DailyDialog train up to ``max_chars`` characters of text in all."""
    dialogues, sources = [], {}
    for name, read in (("demo dialogues", _demo_dialogues), ("DailyDialog train", _dailydialog_train)):
        before = len(dialogues)
        total = sum(len(turn) for dialogue in dialogues for turn in dialogue)
        for dialogue in read():
            if total >= max_chars:
                break
            dialogues.append(dialogue)
            total += sum(len(turn) for turn in dialogue)
        if len(dialogues) > before:
            sources[name] = len(dialogues) - before
    return DemoTexts(dialogues=dialogues, sources=sources)


def _demo_dialogues() -> Iterator[list[str]]:
    with open(DEMO_DIR / "dialogues.jsonl", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                yield [*record["context"], record["response"]]


def _dailydialog_train() -> Iterator[list[str]]:
    path = Path(settings.WELLCHOSEN_SHARED_DATA) / DAILYDIALOG_TRAIN
    if not path.is_file():
        return
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            turns = [dailydialog_untokenize(turn) for turn in line.split(_EOU)]
            turns = [turn for turn in turns if turn]
            if len(turns) >= 2:
                yield turns


def dailydialog_untokenize(text: str) -> str:
    """``"Good.Let ' s go now ."`` → ``"Good.Let's go now."``: DailyDialog's spaces around punctuation removed."""
    text = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(text.split()))
    text = _SPACE_AFTER_PARENTHESIS.sub("(", text)
    return _SPACED_APOSTROPHE.sub(r"\1'\2", text)
