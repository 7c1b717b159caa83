"""The masked LM's guard before a negatives job manipulates anything (negatives.guard): measured on
the dataset's first questions, recorded in the job's report, and a refusal below the bar unless
the job was started with ``skip_guard`` (--skip-guard), which the report records too."""

from annotation.models import Dataset
from core.errors import UserError
from negatives.guard import GUARD_WORDS, mlm_measure
from negatives.manipulation import Manipulator
from negatives.selectors import dataset_guard_items

GUARD_QUESTIONS = 200  # read at most: the measure stops after GUARD_WORDS words


def mlm_guard_check(*, dataset: Dataset, manipulator: Manipulator, model: str, skip: bool, toy: bool = False) -> dict:
    """The guard's figures for the report (``passed``, ``skipped``); a UserError naming the measured
    values and the bar when the model falls short and ``skip`` is off. A toy model (the demo's) is
    measured but not refused: its negatives are labelled as made for trying the workflow."""
    measure = mlm_measure(manipulator, dataset_guard_items(dataset=dataset, limit=GUARD_QUESTIONS), words=GUARD_WORDS)
    if measure is None:
        return {"measured": False, "skipped": skip, "why": "no ground truth of the dataset could be scored"}
    verdict = {**measure.describe(), "skipped": skip}
    if measure.passed or skip or toy:
        return verdict
    raise UserError(
        f"the masked LM {model} is too weak to manipulate responses (measured on {measure.words} words of the "
        f"first ground truths of dataset {dataset.name}): {'; '.join(measure.failures())}. Its negatives would be "
        "garbled. Fine-tune it further (finetune_mlm, see docs/negatives.md, 'The guard'), or start the job with "
        "--skip-guard (the form's 'Skip guard') to generate anyway: the report records it."
    )
