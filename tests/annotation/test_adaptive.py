import json
from types import SimpleNamespace

import pytest

from annotation.adaptive import simulate
from annotation.models import DatasetMembership, QuestionWork
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.submission import Answer, unit_submit
from tests.factories import AnnotatorFactory, CandidateFactory, DatasetFactory, QuestionFactory

RULES = SimpleNamespace(
    acceptable_min_score=3,
    acceptable_min_count=3,
    ungrammatical_max_score=0,
    ungrammatical_min_count=3,
    ground_truth_low_max_score=3,
    ground_truth_low_min_count=3,
)


@pytest.fixture
def question(db):
    dataset = DatasetFactory(name="adaptive", adaptive_stopping=True, attention_check_rate=0)
    question = QuestionFactory(dataset=dataset)
    CandidateFactory(question=question, text="an acceptable reply")
    CandidateFactory(question=question, text="an unrelated reply")
    annotation_open(dataset=dataset)
    return question


def score_as(question, scorer) -> list[str]:
    """One more annotator does the question's unit, scoring each response with scorer(text); returns the texts shown."""
    annotator = AnnotatorFactory()
    DatasetMembership.objects.create(annotator=annotator, dataset=question.dataset)
    assignment = unit_next(annotator=annotator)
    if assignment is None:
        return []
    texts = {c.pk: c.text for c in question.candidates.all()}
    shown = [texts[item["candidate_id"]] for item in assignment.items]
    unit_submit(
        assignment_id=assignment.pk,
        annotator=annotator,
        answers={item["key"]: Answer(scorer(texts[item["candidate_id"]])) for item in assignment.items},
    )
    return shown


def typical(text: str) -> int:
    return 5 if text.startswith("Sure") else 4 if text == "an acceptable reply" else 1


def test_decided_responses_leave_later_units(question):
    # given three annotators who find the acceptable reply acceptable and the ground truth good
    for _ in range(3):
        assert len(score_as(question, typical)) == 3
    # then the ground truth (3 votes > 3, two left cannot make 3 low votes) and the acceptable reply
    # (3 votes >= 3) are decided, and the unrelated reply (3 low votes, 2 left) too: nothing is left
    assert score_as(question, typical) == []
    assert QuestionWork.objects.get(pk=question.pk).is_open is False


def test_only_undecided_responses_are_shown(question):
    mixed = iter(
        [
            {"Sure": 5, "an acceptable reply": 3, "an unrelated reply": 3},
            {"Sure": 5, "an acceptable reply": 3, "an unrelated reply": 1},
            {"Sure": 5, "an acceptable reply": 3, "an unrelated reply": 1},
        ]
    )

    def scorer_for(values):
        return lambda text: next(v for k, v in values.items() if text.startswith(k))

    for values in mixed:
        score_as(question, scorer_for(values))
    # the unrelated reply has one acceptable vote and two left: it could still become acceptable
    assert score_as(question, typical) == ["an unrelated reply"]


def test_a_rejected_ground_truth_closes_the_question_at_once(question):
    for _ in range(3):
        score_as(question, lambda text: 2 if text.startswith("Sure") else 1)
    assert QuestionWork.objects.get(pk=question.pk).is_open is False
    assert score_as(question, typical) == []


def test_without_adaptive_stopping_every_response_gets_all_scores(question):
    question.dataset.adaptive_stopping = False
    question.dataset.save()
    shown = [score_as(question, typical) for _ in range(6)]
    assert [len(s) for s in shown] == [3, 3, 3, 3, 3, 0]


@pytest.mark.shared_data
def test_adaptive_stopping_on_the_released_scores_saves_scores_and_keeps_every_decision(shared_data):
    # given Sato et al.'s 1,019 questions x 4 responses x 5 annotators, annotators arriving in file order
    path = shared_data / "human_annotated" / "eval-via-selection" / "human_scores.jsonl"
    questions = [json.loads(line) for line in path.open()]
    # when each annotator scores only what is still undecided
    result = simulate(questions, RULES, planned=5)
    # then a quarter of the scores is saved and every decision is the one made with all five scores
    print(
        f"\nadaptive stopping: {result.scores_adaptive} of {result.scores_full} scores "
        f"({result.saved:.1%} saved); {result.questions_closed_early} questions closed early"
    )
    assert result.scores_full == 20380
    assert result.decisions_equal == result.decisions_compared == 4076
    assert result.saved > 0.2


def test_simulation_never_changes_a_decision_on_random_scores():
    import random

    rng = random.Random(3)
    questions = [[[rng.choice([0, 1, 1, 2, 3, 3, 4, 5]) for _ in range(5)] for _ in range(6)] for _ in range(3000)]
    result = simulate(questions, RULES, planned=5)
    assert result.decisions_equal == result.decisions_compared
    assert 0 < result.scores_adaptive < result.scores_full
