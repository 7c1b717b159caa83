"""The annotation app's job kinds and their typed parameters (core.job_registry).

Admin forms, management commands and services build these; the handlers in
services/job_handlers.py unpack them. A field's default is that parameter's one default.
"""

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, ClassVar

from django.urls import reverse

from core.job_registry import JobParams, NextStep, param
from core.normalisers import DEFAULT_NORMALISER, NORMALISERS
from core.readable import count, number

DIALOGUE_FORMATS = ("dailydialog", "jsonl")  # annotation.services.dialogue_import reads each


def dataset_step(name: str | None) -> NextStep | None:
    """The dataset's page: where imported questions, pools and quality go on."""
    return NextStep(f"Open dataset {name}", reverse("dashboard-dataset", args=[name])) if name else None


class DatasetNextStep:
    """For a kind whose result names its dataset (``result["dataset"]``): the next step is the
    dataset's page."""

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        return dataset_step(result["dataset"])


# The choices of --normalise (core.normalisers), with what each does for the forms.
NORMALISER_CHOICES = [(n.name, f"{n.name}: {n.description}") for n in NORMALISERS.values()]


def normaliser_param() -> str:
    """The ``normaliser`` parameter of an import: which style normaliser rewrites its texts."""
    return param(
        DEFAULT_NORMALISER,
        help="rewrite every text's style with this normaliser (detokenize: DailyDialog's spaces before "
        "punctuation; subtitles: markup; standard: both), recorded on what is imported into",
        choices=NORMALISER_CHOICES,
        option="--normalise",
    )


def normalised_text(result: dict[str, Any]) -> str:
    """``; normaliser detokenize v1 changed 7,722 of 7,740 texts`` (nothing for the identity)."""
    if "texts_changed" not in result:
        return ""
    return (
        f"; normaliser {result['normaliser']} v{result['normaliser_version']} changed "
        f"{count(result['texts_changed'])} of {count(result['texts_seen'])} texts"
    )


def skipped_text(result: dict[str, Any], labels: dict[str, str]) -> str:
    """``3 blank, 1 too short`` from the result's non-zero ``skipped_*`` counts."""
    return ", ".join(f"{count(result[key])} {label}" for key, label in labels.items() if result.get(key))


@dataclass(frozen=True, kw_only=True)
class ImportDialoguesParams(DatasetNextStep, JobParams):
    kind: ClassVar[str] = "import_dialogues"
    label: ClassVar[str] = "import dialogues"
    start_permission: ClassVar[str | None] = "annotation.add_dataset"

    path: str = param(help="the dialogues file", path=True, form=False)
    format: str = param(help="the file's format", choices=DIALOGUE_FORMATS)
    dataset: str = param(help="new or existing dataset name")
    context_turns: int = param(3, help="turns of context before each ground truth")
    max_dialogues: int | None = param(
        None, help="import the first N dialogues of the file that make a question (empty: all of them)"
    )
    encoding: str = param("utf-8", help="the file's text encoding", form=False)
    normaliser: str = normaliser_param()

    def summary(self, result: dict[str, Any]) -> str:
        lines, questions = result["lines"], result["questions"]
        text = (
            f"Imported {count(questions)} questions into dataset {result['dataset']} "
            f"from {PurePath(self.path).name} ({count(lines)} lines)"
        )
        skipped = skipped_text(
            result,
            {"skipped_blank": "blank", "skipped_short": "too short", "skipped_truncated_last_line": "cut off"},
        )
        skipped_lines = lines - questions
        if result.get("stopped_at_max_dialogues"):
            text += f", the first {count(result['stopped_at_max_dialogues'])} dialogues asked for"
        text += normalised_text(result)
        return (
            f"{text}; {count(skipped_lines)} {'line' if skipped_lines == 1 else 'lines'} skipped ({skipped})."
            if skipped
            else f"{text}."
        )


@dataclass(frozen=True, kw_only=True)
class ImportScoresParams(JobParams):
    kind: ClassVar[str] = "import_scores"
    label: ClassVar[str] = "import scores"
    start_permission: ClassVar[str | None] = "annotation.add_score"

    path: str = param(help="the scores CSV", option="csv", path=True, form=False)
    encoding: str = param("utf-8", help="the CSV's text encoding", form=False)

    def summary(self, result: dict[str, Any]) -> str:
        return (
            f"Read {count(result['rows'])} scores from {PurePath(self.path).name}: "
            f"{count(result['created'])} new, {count(result['unchanged'])} unchanged."
        )


@dataclass(frozen=True, kw_only=True)
class QualityRefreshParams(DatasetNextStep, JobParams):
    kind: ClassVar[str] = "quality_refresh"
    label: ClassVar[str] = "refresh quality and agreement"
    start_permission: ClassVar[str | None] = "annotation.change_dataset"

    dataset_id: int = param(help="the dataset", form=False, command=False)  # the dashboard's button

    def summary(self, result: dict[str, Any]) -> str:
        return (
            f"Refreshed quality and agreement of dataset {result['dataset']}: {count(result['annotators'])} "
            f"annotators, Krippendorff's α {number(result['alpha'])}."
        )


@dataclass(frozen=True, kw_only=True)
class LoadDemoParams(DatasetNextStep, JobParams):
    """The demo data (annotation.services.demo): recorded as a job so that the job list shows what
    `load_demo` loaded, with a link to the demo dataset."""

    kind: ClassVar[str] = "load_demo"
    label: ClassVar[str] = "load the demo data"
    start_permission: ClassVar[str | None] = "annotation.add_dataset"

    with_pools: bool = param(True, help="skip retrieval (no embedding model needed)", option="--no-pools", form=False)
    with_models: bool = param(
        True, help="skip training the demo's toy masked LM and causal system", option="--no-models", form=False
    )

    def summary(self, result: dict[str, Any]) -> str:
        loaded = result["loaded"]
        if not loaded:
            return "The demo data was present already; nothing was loaded."
        return "Loaded the demo: " + "; ".join(loaded) + "."
