"""Human ratings of a campaign: imported ResponseRatings and collected annotation Scores; split-half input."""

import pytest

from annotation.models import Annotator
from evaluation.metrics.correlation import split_half_bound
from evaluation.models import GeneratedResponse, SystemKind
from evaluation.selectors_campaign import campaign_human_ratings, campaign_rated_contexts
from evaluation.services.campaign_report import split_half_ratings
from tests.evaluation.campaign_helpers import campaign_with, rated_generation
from tests.factories import AnnotatorFactory, CandidateFactory, DatasetFactory, QuestionFactory, ScoreFactory


@pytest.fixture
def external(db):
    from evaluation.models import System

    def make(name):
        return System.objects.create(name=name, kind=SystemKind.EXTERNAL)

    return make


def test_imported_ratings_keep_annotator_positions_in_numeric_order(external):
    # given an imported response rated by 12 annotators (keys "0".."11": "10" sorts before "2" as text)
    values = tuple(float(1 + i % 5) for i in range(12))
    generation = rated_generation(external("a"), [values], keys=["d0"])
    campaign = campaign_with(generations=[generation])
    # then the ratings are in annotator order
    assert campaign_human_ratings(campaign=campaign) == {"a": [values]}


def test_only_the_campaign_aspect_counts(external):
    generation = rated_generation(external("a"), [(4, 5)], keys=["d0"])
    response = generation.responses.get()
    response.ratings.create(aspect="grammar", annotator_key="0", value=1)
    campaign = campaign_with(generations=[generation])
    assert campaign_human_ratings(campaign=campaign) == {"a": [(4.0, 5.0)]}


def test_collected_scores_count_without_excluded_annotators_and_shared_candidates_count_for_both(external):
    # given two systems that said the same thing to one question: their responses share a candidate
    dataset = DatasetFactory(name="rate", task="rate")
    question = QuestionFactory(dataset=dataset)
    candidate = CandidateFactory(question=question, text="same words", source="system_response")
    a, b = external("a"), external("b")
    generations = []
    for system in (a, b):
        generation = rated_generation(system, [()], dataset=dataset, keys=[f"q{question.pk}"])
        GeneratedResponse.objects.filter(generation=generation).update(candidate=candidate)
        generations.append(generation)
    # rated by three annotators, one of whom is excluded
    annotators = AnnotatorFactory.create_batch(3)
    for annotator, value in zip(annotators, [4, 2, 5], strict=True):
        ScoreFactory(candidate=candidate, annotator=annotator, value=value)
    Annotator.objects.filter(pk=annotators[1].pk).update(scores_excluded=True)
    campaign = campaign_with(generations=generations)
    # then both systems get the two remaining scores, in annotator id order
    assert campaign_human_ratings(campaign=campaign) == {"a": [(4.0, 5.0)], "b": [(4.0, 5.0)]}


def test_generated_here_systems_are_compared_on_the_contexts_rated_for_all(external):
    # given generations on one dataset where system b has no rating for q2
    dataset = DatasetFactory(name="gen")
    a = rated_generation(external("a"), [(5, 4), (3, 3), (2, 2)], dataset=dataset, keys=["q1", "q2", "q3"])
    b = rated_generation(external("b"), [(1, 2), (4, 4)], dataset=dataset, keys=["q1", "q3"])
    c = rated_generation(external("c"), [(3, 3), (3, 4), (5, 5)], dataset=dataset, keys=["q1", "q2", "q3"])
    campaign = campaign_with(generations=[a, b, c])
    # then every system is judged on q1 and q3 only, and a note says what was left out
    rated, notes = campaign_rated_contexts(campaign=campaign)
    assert {s: list(r) for s, r in rated.items()} == {"a": ["q1", "q3"], "b": ["q1", "q3"], "c": ["q1", "q3"]}
    assert any("2 contexts rated for every system" in n and "2 rated responses" in n for n in notes)


def test_imported_systems_keep_all_their_rated_responses(external):
    # Zhao et al.: each system was rated on its own contexts (one dialogue_id per response)
    a = rated_generation(external("a"), [(5, 4), (3, 3)], keys=["d1", "d2"])
    b = rated_generation(external("b"), [(1, 2)], keys=["d3"])
    campaign = campaign_with(generations=[a, b])
    assert campaign_human_ratings(campaign=campaign) == {"a": [(5.0, 4.0), (3.0, 3.0)], "b": [(1.0, 2.0)]}


def test_split_half_input_uses_the_usual_number_of_ratings():
    # given mostly 4 ratings per response, one response with 3 and one with 5
    ratings = {"a": [(1, 2, 3, 4), (2, 2, 2)], "b": [(5, 5, 4, 4), (1, 1, 1, 1, 1)], "c": [(3, 3, 3, 3)]}
    kept, note = split_half_ratings(ratings)
    # then the bound sees 4 positions everywhere: the short response is left out, the long one cut
    assert kept == {"a": [(1, 2, 3, 4)], "b": [(5, 5, 4, 4), (1, 1, 1, 1)], "c": [(3, 3, 3, 3)]}
    assert "1 responses with fewer left out, 1 with more keep their first 4" in note
    assert split_half_bound(kept, trials=5).annotators == 4


def test_no_split_half_with_one_rating_per_response():
    kept, note = split_half_ratings({"a": [(1,), (2,)], "b": [(3,)]})
    assert kept is None and "at least 2 ratings" in note
