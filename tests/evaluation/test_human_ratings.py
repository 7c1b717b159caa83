"""Human ratings of generated responses: a "rate this response 1-5" dataset built from generations,
rated with the annotation machinery, read back per system next to imported ratings."""

import pytest

from annotation.models import (
    Assignment,
    Candidate,
    CandidateSource,
    DatasetMembership,
    DatasetTask,
    Question,
    QuestionWork,
    Score,
)
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.submission import Answer, unit_submit
from core.errors import UserError
from evaluation.human import system_human_scores
from evaluation.models import GeneratedResponse, ResponseRating
from evaluation.selectors import human_rating_values, human_ratings, system_human_scores_from_db
from evaluation.services.human_ratings import rating_dataset_create
from tests.factories import (
    AnnotatorFactory,
    CandidateFactory,
    GeneratedResponseFactory,
    GenerationFactory,
    QuestionFactory,
    ScoreFactory,
    attention_check_repository,
)

CONTEXTS = {
    "d1": (["Hi there.", "Hello, how are you?"], "Fine, thanks. And you?"),
    "d2": (["Where is the station?"], "Two blocks north."),
    "d3": (["Shall we order pizza?", "Sure, what kind?"], "Margherita, please."),
}


def respond(generation, key: str, text: str):
    turns, reference = CONTEXTS[key]
    return GeneratedResponseFactory(
        generation=generation, context_key=key, context=turns, references=[reference], text=text
    )


@pytest.fixture
def generations(db):
    """alpha answers d1-d3; beta answers d1 (the same words as alpha, other case and spacing) and d2
    (the reference itself)."""
    alpha = GenerationFactory(system__name="alpha")
    beta = GenerationFactory(system__name="beta")
    respond(alpha, "d1", "I am fine .")
    respond(alpha, "d2", "I do not know.")
    respond(alpha, "d3", "Pizza is round.")
    respond(beta, "d1", "i am  FINE.")
    respond(beta, "d2", "Two blocks north.")
    return alpha, beta


def candidate_texts(question):
    return sorted((c.text, c.is_ground_truth, c.source) for c in question.candidates.all())


def test_one_question_per_context_with_the_reference_and_each_distinct_response(generations):
    alpha, beta = generations
    # when a rating dataset is made of both generations
    dataset = rating_dataset_create(name="rate-ab", generation_ids=[alpha.pk, beta.pk])
    # then it rates (no adaptive stopping), with one question per context, in alpha's order
    assert dataset.task == DatasetTask.RATE and dataset.adaptive_stopping is False and dataset.annotators_per_item == 5
    questions = list(Question.objects.filter(dataset=dataset).select_related("context").order_by("id"))
    assert [q.context.source for q in questions] == ["d1", "d2", "d3"]
    assert [q.ground_truth for q in questions] == [CONTEXTS[k][1] for k in ("d1", "d2", "d3")]
    assert [list(q.context.turns.values_list("text", flat=True)) for q in questions] == [
        CONTEXTS[k][0] for k in ("d1", "d2", "d3")
    ]
    imported, generated = CandidateSource.IMPORTED, CandidateSource.SYSTEM_RESPONSE
    assert candidate_texts(questions[0]) == [
        ("Fine, thanks. And you?", True, imported),
        ("I am fine .", False, generated),
    ]
    assert candidate_texts(questions[1]) == [
        ("I do not know.", False, generated),
        ("Two blocks north.", True, imported),
    ]
    assert candidate_texts(questions[2]) == [
        ("Margherita, please.", True, imported),
        ("Pizza is round.", False, generated),
    ]


def test_identical_responses_share_a_candidate_and_the_reference_is_one_too(generations):
    alpha, beta = generations
    rating_dataset_create(name="rate-ab", generation_ids=[alpha.pk, beta.pk])
    by_key = {
        (r.generation_id, r.context_key): r.candidate for r in GeneratedResponse.objects.select_related("candidate")
    }
    # the same words after normalisation: one candidate, one set of ratings, for both systems
    assert by_key[(alpha.pk, "d1")] == by_key[(beta.pk, "d1")]
    # beta's d2 response is the reference: it is rated as the ground truth
    assert by_key[(beta.pk, "d2")].is_ground_truth
    assert by_key[(alpha.pk, "d2")] != by_key[(beta.pk, "d2")]
    assert all(candidate is not None for candidate in by_key.values())


def test_without_the_reference_only_responses_are_rated(generations):
    alpha, beta = generations
    dataset = rating_dataset_create(name="rate-ab", generation_ids=[alpha.pk, beta.pk], include_reference=False)
    candidates = Candidate.objects.filter(question__dataset=dataset)
    assert not candidates.filter(is_ground_truth=True).exists()
    assert candidates.count() == 4  # d1 shared, d2 two, d3 one
    assert set(candidates.values_list("source", flat=True)) == {CandidateSource.SYSTEM_RESPONSE}


def test_every_question_is_an_open_unit_needing_every_annotator(generations):
    alpha, beta = generations
    dataset = rating_dataset_create(name="rate-ab", generation_ids=[alpha.pk, beta.pk], annotators_per_item=3)
    work = list(QuestionWork.objects.filter(dataset=dataset).values_list("is_open", "slots_needed", "slots_taken"))
    assert work == [(True, 3, 0)] * 3
    # the engine's own preparation finds nothing to change
    assert annotation_open(dataset=dataset) == 3
    assert list(QuestionWork.objects.filter(dataset=dataset).values_list("is_open", "slots_needed")) == [(True, 3)] * 3


def test_a_response_stored_without_its_context_takes_its_questions_turns(db):
    source = QuestionFactory()
    generation = GenerationFactory(dataset=source.dataset, source_file="")
    GeneratedResponseFactory(
        generation=generation, question=source, context_key=f"q{source.pk}", context=[], text="Maybe later."
    )
    dataset = rating_dataset_create(name="rate-q", generation_ids=[generation.pk])
    question = Question.objects.get(dataset=dataset)
    assert question.pk != source.pk and question.context_id != source.context_id
    assert list(question.context.turns.values_list("text", flat=True)) == list(
        source.context.turns.values_list("text", flat=True)
    )


@pytest.mark.parametrize(
    "case, message",
    [
        ("unknown", "no generation with id 999999"),
        ("empty", "has no responses to rate"),
        ("name-taken", "exists already"),
        ("bad-name", "must be a slug"),
        ("context-differs", "context 'd1' differs between generation"),
    ],
)
def test_bad_requests_are_refused_and_nothing_is_created(generations, case, message):
    alpha, beta = generations
    ids = [alpha.pk, beta.pk]
    name = "rate-ab"
    if case == "unknown":
        ids.append(999999)
    elif case == "empty":
        ids.append(GenerationFactory().pk)
    elif case == "name-taken":
        rating_dataset_create(name="rate-ab", generation_ids=[alpha.pk])
        GeneratedResponse.objects.update(candidate=None)
        ids = [beta.pk]
    elif case == "bad-name":
        name = "Rate AB"
    else:
        GeneratedResponse.objects.filter(generation=beta, context_key="d1").update(context=["Something else."])
    questions_before = Question.objects.count()
    with pytest.raises(UserError, match=message):
        rating_dataset_create(name=name, generation_ids=ids)
    assert Question.objects.count() == questions_before


def test_responses_already_being_rated_are_not_sent_again(generations):
    alpha, beta = generations
    rating_dataset_create(name="rate-a", generation_ids=[alpha.pk])
    with pytest.raises(UserError, match="already being rated in dataset 'rate-a'"):
        rating_dataset_create(name="rate-ab", generation_ids=[alpha.pk, beta.pk])


def rate_everything(dataset, annotators, value_for):
    """Each annotator rates every unit; ``value_for(annotator, text)`` gives the rating (attention
    checks, whose text is no candidate of the unit, get ``value_for(annotator, None)``)."""
    for annotator in annotators:
        DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
        while (assignment := unit_next(annotator=annotator, dataset=dataset)) is not None:
            texts = dict(Candidate.objects.filter(question_id=assignment.question_id).values_list("id", "text"))
            answers = {
                item["key"]: Answer(value_for(annotator, None if item.get("check") else texts[item["candidate_id"]]))
                for item in assignment.items
            }
            unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers)


@pytest.fixture
def rated(generations):
    """Three annotators rate alpha and beta's responses; the third one's scores are excluded. Every
    unit carries an attention check, answered 5 (failed) by everyone."""
    alpha, beta = generations
    dataset = rating_dataset_create(name="rate-ab", generation_ids=[alpha.pk, beta.pk], annotators_per_item=3)
    dataset.attention_check_rate = 1.0
    dataset.save()
    attention_check_repository(dataset)
    first, second, excluded = AnnotatorFactory.create_batch(3)
    values = {first.pk: {"I am fine .": 4, "I do not know.": 2}, second.pk: {"I am fine .": 5, "I do not know.": 1}}

    def value_for(annotator, text):
        if text is None:
            return 5
        return values.get(annotator.pk, {}).get(text, 3)

    rate_everything(dataset, [first, second, excluded], value_for)
    excluded.scores_excluded = True
    excluded.save()
    return alpha, beta, first, second


def test_collected_ratings_come_back_per_system_and_context(rated):
    alpha, beta, first, second = rated
    ratings = human_ratings(generation_ids=[alpha.pk, beta.pk])
    a, b = f"a{first.pk}", f"a{second.pk}"
    assert ratings == {
        # alpha and beta said the same to d1: both get the ratings of the shared candidate
        "alpha": {"d1": [(a, 4.0), (b, 5.0)], "d2": [(a, 2.0), (b, 1.0)], "d3": [(a, 3.0), (b, 3.0)]},
        # beta's d2 is the reference, rated (as the ground truth) 3 by both
        "beta": {"d1": [(a, 4.0), (b, 5.0)], "d2": [(a, 3.0), (b, 3.0)]},
    }


def test_attention_checks_are_not_ratings(rated):
    alpha, beta, *_ = rated
    # every unit had an attention check rated 5; no rating of 5 comes from anything but "I am fine ."
    values = [
        v
        for by_context in human_ratings(generation_ids=[alpha.pk, beta.pk]).values()
        for p in by_context.values()
        for _, v in p
    ]
    assert values.count(5.0) == 2
    assert Score.objects.filter(value=5).count() == 1  # the one score of 5 on a candidate
    assert Assignment.objects.filter(check_value=5, check_passed=False).count() == 9  # 3 units x 3 annotators


def test_excluding_an_annotator_removes_their_ratings(rated):
    alpha, beta, first, second = rated
    keys = {
        k for by_context in human_ratings(generation_ids=[alpha.pk]).values() for p in by_context.values() for k, _ in p
    }
    assert keys == {f"a{first.pk}", f"a{second.pk}"}


def test_imported_and_collected_ratings_are_merged_and_filtered_by_aspect(rated):
    alpha, beta, first, second = rated
    gamma = GenerationFactory(system__name="gamma")
    imported = respond(gamma, "d1", "Not bad.")
    ResponseRating.objects.create(response=imported, aspect="appropriateness", annotator_key="0", value=4)
    ResponseRating.objects.create(response=imported, aspect="appropriateness", annotator_key="1", value=2)
    ResponseRating.objects.create(response=imported, aspect="content", annotator_key="0", value=1)
    ratings = human_ratings(generation_ids=[alpha.pk, gamma.pk])
    assert set(ratings) == {"alpha", "gamma"}
    assert ratings["gamma"] == {"d1": [("0", 4.0), ("1", 2.0)]}
    # the rating task asks for appropriateness: collected ratings count for that aspect only
    assert human_ratings(generation_ids=[alpha.pk, gamma.pk], aspect="content") == {"gamma": {"d1": [("0", 1.0)]}}


def test_scores_on_candidates_of_a_selection_dataset_are_not_ratings(db):
    # given a response pointing at a candidate of an ordinary (select) dataset, scored 0-5
    candidate = CandidateFactory()
    ScoreFactory(candidate=candidate, value=4)
    response = GeneratedResponseFactory(candidate=candidate)
    assert human_ratings(generation_ids=[response.generation_id]) == {}


def test_the_selector_reads_in_two_queries_at_any_size(rated, django_assert_num_queries):
    alpha, beta, *_ = rated
    with django_assert_num_queries(2):
        human_ratings(generation_ids=[alpha.pk, beta.pk])


def test_system_human_score_is_the_mean_over_responses_of_the_mean_rating(rated):
    alpha, beta, *_ = rated
    scores = system_human_scores_from_db(generation_ids=[alpha.pk, beta.pk])
    # alpha: d1 (4+5)/2, d2 (2+1)/2, d3 3 -> (4.5 + 1.5 + 3) / 3; beta: d1 4.5, d2 3 -> 3.75
    assert scores == pytest.approx({"alpha": 3.0, "beta": 3.75})
    ratings = human_ratings(generation_ids=[alpha.pk, beta.pk])
    assert system_human_scores(human_rating_values(ratings)) == scores
