"""How a dataset's annotators were recruited and paid, as lines for a test set's dataset card.

The crowd app knows (its batches' rewards) and registers a source from its AppConfig.ready();
the test-set card reads them. Neither app imports the other: both use this registry. Without a
source the card leaves pay for the researcher to fill in.
"""

from collections.abc import Callable

from annotation.models import Dataset

AnnotatorPayLines = Callable[[Dataset], list[str]]
_pay_lines: list[AnnotatorPayLines] = []


def annotator_pay_register(lines: AnnotatorPayLines) -> None:
    if lines not in _pay_lines:
        _pay_lines.append(lines)


def annotator_pay_lines(dataset: Dataset) -> list[str]:
    """Every registered source's lines for ``dataset``, in the order they were registered."""
    return [line for lines in _pay_lines for line in lines(dataset)]
