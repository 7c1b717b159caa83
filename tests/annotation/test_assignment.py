from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Annotator, Assignment, AssignmentStatus, DatasetMembership, QuestionWork, Score
from annotation.selectors import filter_rules_current, question_open_candidates
from annotation.services.annotators_admin import annotator_block
from annotation.services.assignment import annotation_open, leases_reclaim, unit_next
from annotation.services.submission import Answer, unit_submit
from core.errors import UserError
from tests.factories import (
    AnnotatorFactory,
    CandidateFactory,
    DatasetFactory,
    QuestionFactory,
    attention_check_repository,
)


@pytest.fixture
def dataset(db):
    """Two questions of 1 ground truth + 3 candidates; five planned annotators; no attention checks."""
    dataset = DatasetFactory(name="annotate", adaptive_stopping=False, attention_check_rate=0)
    for _ in range(2):
        question = QuestionFactory(dataset=dataset)
        for i in range(3):
            CandidateFactory(question=question, text=f"candidate {question.pk}-{i}")
    annotation_open(dataset=dataset)
    return dataset


def member(dataset, **kwargs) -> Annotator:
    annotator = AnnotatorFactory(**kwargs)
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    return annotator


def answer_all(assignment, value=1) -> dict:
    return {item["key"]: Answer(value) for item in assignment.items}


def test_a_unit_shows_the_ground_truth_among_its_candidates_under_a_lease(dataset):
    assignment = unit_next(annotator=member(dataset))
    assert len(assignment.items) == 4
    shown = {item["candidate_id"] for item in assignment.items}
    assert shown == set(assignment.question.candidates.values_list("id", flat=True))
    assert timedelta(minutes=29) < assignment.leased_until - timezone.now() <= timedelta(minutes=30)
    assert QuestionWork.objects.get(pk=assignment.question_id).slots_taken == 1


def test_the_order_is_shuffled_per_annotator(dataset):
    orders = set()
    for _ in range(12):
        assignment = unit_next(annotator=member(dataset))
        if assignment:
            orders.add(tuple(item["candidate_id"] for item in assignment.items))
    assert len(orders) > 1


def test_asking_again_resumes_the_same_unit(dataset):
    annotator = member(dataset)
    assert unit_next(annotator=annotator) == unit_next(annotator=annotator)


def test_nobody_sees_the_same_unit_twice(dataset):
    annotator = member(dataset)
    first = unit_next(annotator=annotator)
    unit_submit(assignment_id=first.pk, annotator=annotator, answers=answer_all(first))
    second = unit_next(annotator=annotator)
    assert second.question_id != first.question_id
    unit_submit(assignment_id=second.pk, annotator=annotator, answers=answer_all(second))
    assert unit_next(annotator=annotator) is None


def test_every_unit_gets_exactly_k_distinct_annotators(dataset):
    # given 7 annotators working through both questions
    annotators = [member(dataset) for _ in range(7)]
    for annotator in annotators:
        while (assignment := unit_next(annotator=annotator)) is not None:
            unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answer_all(assignment))
    # then each question was done by exactly 5 different annotators, each response scored 5 times
    for work in QuestionWork.objects.all():
        done = Assignment.objects.filter(question_id=work.pk, status=AssignmentStatus.SUBMITTED)
        assert done.values("annotator").distinct().count() == 5
        for candidate in work.question.candidates.all():
            assert candidate.scores.values("annotator").distinct().count() == 5


def test_an_expired_lease_goes_to_someone_else(dataset):
    dataset.annotators_per_item = 1
    dataset.save()
    annotation_open(dataset=dataset)
    first, second = member(dataset), member(dataset)
    a = unit_next(annotator=first)
    b = unit_next(annotator=second)
    assert unit_next(annotator=member(dataset)) is None  # both questions taken
    Assignment.objects.filter(pk=a.pk).update(leased_until=timezone.now() - timedelta(seconds=1))
    # when someone asks for work, the expired lease is reclaimed and its question handed out
    third = unit_next(annotator=member(dataset))
    assert third.question_id == a.question_id and b.question_id != a.question_id
    assert Assignment.objects.get(pk=a.pk).status == AssignmentStatus.EXPIRED


def test_a_late_submission_is_kept_while_the_unit_has_room(dataset):
    annotator = member(dataset)
    assignment = unit_next(annotator=annotator)
    Assignment.objects.filter(pk=assignment.pk).update(leased_until=timezone.now() - timedelta(seconds=1))
    assert leases_reclaim() == 1
    result = unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answer_all(assignment))
    assert result.created and Score.objects.filter(annotator=annotator).count() == 4
    assert QuestionWork.objects.get(pk=assignment.question_id).slots_taken == 1


def test_a_late_submission_to_a_full_unit_is_refused(dataset):
    dataset.annotators_per_item = 1
    dataset.save()
    annotation_open(dataset=dataset)
    late = member(dataset)
    assignment = unit_next(annotator=late)
    Assignment.objects.filter(pk=assignment.pk).update(leased_until=timezone.now() - timedelta(seconds=1))
    other = member(dataset)
    taken = unit_next(annotator=other)
    assert taken.question_id == assignment.question_id
    with pytest.raises(UserError, match="other annotators have completed it"):
        unit_submit(assignment_id=assignment.pk, annotator=late, answers=answer_all(assignment))


def test_submitting_twice_changes_nothing(dataset):
    annotator = member(dataset)
    assignment = unit_next(annotator=annotator)
    assert unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answer_all(assignment, 2)).created
    again = unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answer_all(assignment, 5))
    assert not again.created
    assert list(Score.objects.filter(annotator=annotator).values_list("value", flat=True)) == [2, 2, 2, 2]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda answers: answers.popitem(), "have no score yet"),
        (lambda answers: answers.update(bogus=Answer(1)), "not in this unit"),
        (lambda answers: answers.update({next(iter(answers)): Answer(6)}), "not an integer from 0 to 5"),
        (lambda answers: answers.update({next(iter(answers)): Answer(4, ["wrong tense"])}), "scores of 2 or less"),
        (lambda answers: answers.update({next(iter(answers)): Answer(1, ["too boring"])}), "unknown label"),
    ],
)
def test_bad_answers_are_refused_and_nothing_is_stored(dataset, change, message):
    annotator = member(dataset)
    assignment = unit_next(annotator=annotator)
    answers = answer_all(assignment)
    change(answers)
    with pytest.raises(UserError, match=message):
        unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers)
    assert not Score.objects.exists()
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.LEASED


def test_reasons_are_stored_with_low_scores(dataset):
    annotator = member(dataset)
    assignment = unit_next(annotator=annotator)
    answers = answer_all(assignment, 1)
    answers[next(iter(answers))] = Answer(0, ["wrong subject", "other"])
    unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers)
    assert Score.objects.get(value=0).labels == ["wrong subject", "other"]


def test_only_own_units_can_be_submitted(dataset):
    owner, intruder = member(dataset), member(dataset)
    assignment = unit_next(annotator=owner)
    with pytest.raises(UserError, match="no such unit"):
        unit_submit(assignment_id=assignment.pk, annotator=intruder, answers=answer_all(assignment))


def test_annotators_only_get_datasets_they_are_members_of(dataset):
    assert unit_next(annotator=AnnotatorFactory()) is None


def test_per_annotator_cap(dataset):
    annotator = member(dataset)
    DatasetMembership.objects.filter(annotator=annotator).update(max_units=1)
    first = unit_next(annotator=annotator)
    unit_submit(assignment_id=first.pk, annotator=annotator, answers=answer_all(first))
    assert unit_next(annotator=annotator) is None


def test_blocking_releases_open_leases_and_stops_new_units(dataset):
    annotator = member(dataset)
    assignment = unit_next(annotator=annotator)
    assert annotator_block(annotator=annotator) == 1
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.RELEASED
    assert QuestionWork.objects.get(pk=assignment.question_id).slots_taken == 0
    with pytest.raises(UserError, match="blocked"):
        unit_next(annotator=annotator)
    with pytest.raises(UserError, match="taken back"):
        unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answer_all(assignment))


def test_attention_checks_are_added_and_judged(dataset):
    dataset.attention_check_rate = 1.0
    dataset.save()
    attention_check_repository(dataset)
    annotator = member(dataset)
    assignment = unit_next(annotator=annotator)
    checks = [item for item in assignment.items if item.get("check")]
    assert len(checks) == 1 and checks[0]["text"]
    assert checks[0]["text"] != assignment.question.ground_truth
    answers = answer_all(assignment, 3)
    answers[checks[0]["key"]] = Answer(4)
    unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers)
    assignment.refresh_from_db()
    assert (assignment.check_value, assignment.check_passed) == (4, False)
    assert Score.objects.filter(annotator=annotator).count() == 4  # the check is not a candidate score


SCORE_PATTERNS = [
    ([5, 5, 4, 5, 5], [[1, 1, 2, 1, 1]]),  # decided: ground truth passes, the candidate is kept
    ([1, 1, 2, 1, 1], [[3, 3, 3]]),  # ground truth rejected: nothing left to score (adaptive)
    ([5, 5, 5], [[1, 1, 1, 1, 1]]),  # the ground truth still needs scores
    ([5, 5, 5, 5, 5], [[4, 4, 1]]),  # a candidate still open
    ([5, 5, 5, 5, 5], [[4, 4, 4], [0, 0, 0]]),  # decided early: acceptable and ungrammatical
]


@pytest.mark.parametrize("adaptive", [True, False], ids=["adaptive", "every-score"])
def test_opening_refreshes_every_unit_as_the_per_question_rule_does(scored_question, adaptive):
    # given questions in every state of the rules, their scores given before the dataset was opened
    dataset = DatasetFactory(name="mixed", adaptive_stopping=adaptive, attention_check_rate=0)
    questions = [scored_question(dataset=dataset, gt=gt, false=false) for gt, false in SCORE_PATTERNS * 3]
    # when it is opened (one refresh for the whole dataset)
    annotation_open(dataset=dataset)
    # then each unit is open exactly when the per-question rule says a response still needs scores
    rules = filter_rules_current()
    expected = {q.pk: bool(question_open_candidates(question_id=q.pk, dataset=dataset, rules=rules)) for q in questions}
    assert dict(QuestionWork.objects.filter(dataset=dataset).values_list("question_id", "is_open")) == expected
    assert len(set(expected.values())) == 2  # some open, some closed


def test_opening_a_dataset_makes_the_same_number_of_queries_for_any_number_of_questions(
    scored_question, django_assert_max_num_queries
):
    dataset = DatasetFactory(name="count", attention_check_rate=0)
    for _ in range(30):
        scored_question(dataset=dataset, gt=[5, 5, 5, 5, 5], false=[[1, 1, 1, 1, 1]])
    with django_assert_max_num_queries(15):
        annotation_open(dataset=dataset)
    assert not QuestionWork.objects.filter(dataset=dataset, is_open=True).exists()
