"""Probabilistic stopping on live units: what the assignment engine hands out and what the rules decide."""

import pytest

from annotation.models import QuestionWork
from annotation.selectors import candidate_decisions, filter_rules_current
from annotation.selectors_stopping import DeterministicDecider, decider_get, spot_checked
from annotation.services.assignment import annotation_open
from tests.annotation.test_adaptive import score_as
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory


def clear(text: str) -> int:
    """The ground truth ("Sure ...") gets 5, the unrelated reply 1."""
    return 5 if text.startswith("Sure") else 1


@pytest.fixture
def make_question(db):
    def make(**settings):
        dataset = DatasetFactory(adaptive_stopping=True, attention_check_rate=0, **settings)
        question = QuestionFactory(dataset=dataset)
        CandidateFactory(question=question, text="an unrelated reply")
        annotation_open(dataset=dataset)
        return question

    return make


def test_a_clear_question_closes_after_two_annotators_at_a_tolerance(make_question):
    # given a 10 % tolerance, no spot checks, and (too few responses to fit) the uniform prior
    question = make_question(stopping_tolerance=0.1, spot_check_rate=0)
    for _ in range(2):
        assert len(score_as(question, clear)) == 2
    # then 5, 5 and 1, 1 are all but decided: nothing is left, and the reply is a kept false candidate
    assert score_as(question, clear) == []
    assert QuestionWork.objects.get(pk=question.pk).is_open is False
    decisions = {
        d.is_ground_truth: d.decision
        for d in candidate_decisions(dataset=question.dataset, rules=filter_rules_current())
    }
    assert decisions == {True: "passed", False: "kept"}


def test_tolerance_zero_waits_for_the_rule(make_question):
    question = make_question(stopping_tolerance=0, spot_check_rate=0)
    for _ in range(2):
        score_as(question, clear)
    assert len(score_as(question, clear)) == 2
    assert isinstance(decider_get(dataset=question.dataset, rules=filter_rules_current()), DeterministicDecider)


def test_a_spot_checked_response_gets_its_scores_the_model_would_save(make_question):
    # given every response a spot check
    question = make_question(stopping_tolerance=0.1, spot_check_rate=1.0)
    for _ in range(2):
        score_as(question, clear)
    # then the third annotator still scores both (the rule decides them after the third)
    assert len(score_as(question, clear)) == 2
    assert score_as(question, clear) == []


def test_spot_checks_take_the_share_asked_for():
    share = sum(spot_checked(i, 0.05) for i in range(1, 20001)) / 20000
    assert 0.04 < share < 0.06
    assert not any(spot_checked(i, 0) for i in range(1, 1000))


def test_the_dataset_page_shows_the_tolerance_and_what_the_spot_checks_found(make_question, admin_client):
    from django.urls import reverse

    from annotation.services.quality import quality_refresh

    # given spot checks everywhere and a question whose ground truth is scored 5, 5, 5 and whose reply
    # 1, 1, 4, 4, 4: the model would stop both after two scores, rightly for the ground truth (the
    # rule passes it after three) and wrongly for the reply (kept, where five scores find it acceptable)
    question = make_question(stopping_tolerance=0.1, spot_check_rate=1.0)
    for reply in (1, 1, 4, 4, 4):
        score_as(question, lambda text, reply=reply: 5 if text.startswith("Sure") else reply)
    quality_refresh(dataset=question.dataset)
    html = admin_client.get(reverse("dashboard-dataset", args=[question.dataset.name])).content.decode()
    assert 'id="stopping-tolerance">10.0 %' in html
    assert "1 of 2 decisions rest on fewer than 5 scores (0 by the model)" in html
    assert "spot checks (100.0 % of responses get all scores): 1 of 2 that the model would have stopped" in html


def test_lowering_the_tolerance_reopens_a_question_it_had_closed(make_question):
    from annotation.services.datasets import dataset_save

    question = make_question(stopping_tolerance=0.1, spot_check_rate=0)
    for _ in range(2):
        score_as(question, clear)
    assert QuestionWork.objects.get(pk=question.pk).is_open is False
    # when the researcher sets the deterministic rule, the question needs its third annotator again
    question.dataset.stopping_tolerance = 0
    dataset_save(dataset=question.dataset)
    assert QuestionWork.objects.get(pk=question.pk).is_open is True
    assert len(score_as(question, clear)) == 2


def test_rules_whose_ungrammatical_and_acceptable_scores_overlap_keep_the_deterministic_rule(make_question):
    from annotation.models import FilterRules

    question = make_question(stopping_tolerance=0.1)
    rules = FilterRules(version=99, ungrammatical_max_score=3, acceptable_min_score=3)
    assert type(decider_get(dataset=question.dataset, rules=rules)) is DeterministicDecider
