"""The probe of issue 14, item 2: an annotator works through 20 units of a dataset whose units
nearly all carry an attention check. A check's text must never be a ground truth, a context turn
or a candidate of the dataset (a sentence met once as a check and again as a response marks that
response), nor of another dataset, and nobody sees the same check twice.

The repository the checks come from holds what a real one holds: the candidates retrieved from it,
and copies of ground truths and context turns written differently (a subtitle file is not
tokenised like DailyDialog), beside ordinary unrelated lines."""

import pytest

from annotation.models import DatasetMembership
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.submission import Answer, unit_submit
from core.text import text_hash
from tests.factories import (
    AnnotatorFactory,
    CandidateFactory,
    DatasetFactory,
    QuestionFactory,
    RepositoryFactory,
    UtteranceFactory,
)

UNITS = 20


def _respelled(text: str) -> str:
    """The same sentence as another corpus writes it: other case, spaced punctuation."""
    return text.upper().replace(",", " ,").replace("?", " ?").replace(".", " .")


@pytest.fixture
def probed(db):
    repository = RepositoryFactory(name="subtitles")
    dataset = DatasetFactory(name="probe", adaptive_stopping=False, attention_check_rate=1.0, annotators_per_item=3)
    dataset.attention_check_repository = repository
    dataset.save()
    forbidden = set()
    for n in range(UNITS):
        question = QuestionFactory(dataset=dataset, ground_truth=f"I put the ticket for gate {n} in your coat.")
        for i in range(3):
            utterance = UtteranceFactory(repository=repository, text=f"Retrieved line {n}-{i} about the gate.")
            CandidateFactory(question=question, text=utterance.text, utterance=utterance)
        turns = list(question.context.turns.values_list("text", flat=True))
        for text in [question.ground_truth, *turns]:
            if not repository.utterances.filter(text_hash=text_hash(text)).exists():
                UtteranceFactory(repository=repository, text=_respelled(text))
        forbidden.update(question.candidates.values_list("text_hash", flat=True))
        forbidden.update(text_hash(t) for t in turns)
    # another dataset's ground truth and context, also in the repository
    other = QuestionFactory(dataset=DatasetFactory(name="held-out"), ground_truth="The held-out answer stays secret.")
    for text in [other.ground_truth, *other.context.turns.values_list("text", flat=True)]:
        forbidden.add(text_hash(text))
        if not repository.utterances.filter(text_hash=text_hash(text)).exists():
            UtteranceFactory(repository=repository, text=_respelled(text))
    for n in range(2 * UNITS):
        UtteranceFactory(repository=repository, text=f"The lighthouse keeper painted boat number {n} green.")
    annotation_open(dataset=dataset)
    return dataset, forbidden


def test_twenty_units_with_attention_checks_leak_nothing(probed):
    dataset, forbidden = probed
    annotator = AnnotatorFactory()
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    checks = []
    for _ in range(UNITS):
        assignment = unit_next(annotator=annotator)
        checks += [item["text"] for item in assignment.items if item.get("check")]
        answers = {item["key"]: Answer(1 if item.get("check") else 3) for item in assignment.items}
        unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers)
    assert unit_next(annotator=annotator) is None
    leaks = [text for text in checks if text_hash(text) in forbidden]
    assert leaks == []
    assert len(set(checks)) == len(checks) == UNITS  # every unit got one; none twice
