"""Attention checks come from the dataset's attention-check repository: never a text of a dataset
(ground truth, context turn, candidate), never the same one twice to an annotator, never invented
from the dataset when there is no repository."""

import importlib
import random

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment, DatasetMembership
from annotation.services.assignment import annotation_open, unit_lease_question, unit_next
from annotation.services.attention_checks import (
    ATTENTION_CHECK_MIN_TOKENS,
    attention_check_pick,
    dataset_check_repository_adopt,
)
from annotation.services.submission import Answer, unit_submit
from core.text import text_hash
from tests.factories import (
    AnnotatorFactory,
    CandidateFactory,
    DatasetFactory,
    QuestionFactory,
    RepositoryFactory,
    UtteranceFactory,
    attention_check_repository,
    unrelated_lines,
)

UNITS = 30


def checked_dataset(name="checked", *, units=UNITS, clean=2 * UNITS):
    """A dataset whose every unit carries a check, and a repository holding, beside ``clean``
    unrelated lines, every text of the dataset (its candidates came from there) and of another
    dataset, written as another corpus would write them."""
    dataset = DatasetFactory(name=name, adaptive_stopping=False, attention_check_rate=1.0, annotators_per_item=2)
    repository = attention_check_repository(dataset, utterances=0)
    texts = []
    for n in range(units):
        question = QuestionFactory(dataset=dataset, ground_truth=f"Your ticket for gate {n} is in my coat.")
        for i in range(2):
            utterance = UtteranceFactory(repository=repository, text=f"The gate {n} closes at {i} sharp tonight.")
            CandidateFactory(question=question, text=utterance.text, utterance=utterance)
        texts += [question.ground_truth, *question.context.turns.values_list("text", flat=True)]
    other = QuestionFactory(dataset=DatasetFactory(name=f"{name}-other"), ground_truth="An answer of another dataset.")
    texts += [other.ground_truth, *other.context.turns.values_list("text", flat=True)]
    for text in texts:
        if not repository.utterances.filter(text_hash=text_hash(text)).exists():
            UtteranceFactory(repository=repository, text=text.upper().replace(".", " ."))
    unrelated_lines(repository, clean)  # after the dataset's texts: a probe from any id finds one
    annotation_open(dataset=dataset)
    return dataset


def member(dataset):
    annotator = AnnotatorFactory()
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    return annotator


def work_through(dataset, annotator) -> list[str]:
    """Every unit the annotator can get, submitted; the texts of the checks they were shown."""
    shown = []
    while (assignment := unit_next(annotator=annotator, dataset=dataset)) is not None:
        shown += [item["text"] for item in assignment.items if item.get("check")]
        answers = {item["key"]: Answer(0 if item.get("check") else 3) for item in assignment.items}
        unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers)
    return shown


def dataset_texts() -> set[str]:
    from annotation.models import Candidate, Turn

    return set(Candidate.objects.values_list("text_hash", flat=True)) | set(
        Turn.objects.values_list("text_hash", flat=True)
    )


def test_a_check_is_no_ground_truth_context_turn_or_candidate_of_any_dataset(db):
    dataset = checked_dataset()
    forbidden = dataset_texts()
    for annotator in (member(dataset), member(dataset)):
        shown = work_through(dataset, annotator)
        assert len(shown) == UNITS
        assert [text for text in shown if text_hash(text) in forbidden] == []


def test_an_annotator_never_gets_the_same_check_twice(db):
    # given 3 usable lines for 8 units with a check each
    dataset = checked_dataset(units=8, clean=3)
    first, second = member(dataset), member(dataset)
    # then each annotator sees each line once, and the remaining units carry no check
    for annotator in (first, second):
        shown = work_through(dataset, annotator)
        assert sorted(shown) == sorted(set(shown)) and len(shown) == 3
    assert Assignment.objects.filter(annotator=first, check_utterance__isnull=False).count() == 3
    assert Assignment.objects.filter(annotator=first, check_utterance__isnull=True).count() == 5


def test_the_database_refuses_one_check_twice_to_an_annotator(db):
    dataset = checked_dataset(units=2, clean=1)
    annotator = member(dataset)
    first = unit_next(annotator=annotator)
    other_unit = dataset.work.exclude(question_id=first.question_id).get()
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(
            question_id=other_unit.question_id,
            annotator=annotator,
            check_utterance=first.check_utterance,
            leased_until=first.leased_until,
        )


def test_the_check_shown_is_the_recorded_utterance(db):
    dataset = checked_dataset(units=1, clean=5)
    assignment = unit_next(annotator=member(dataset))
    [check] = [item for item in assignment.items if item.get("check")]
    assert check["text"] == assignment.check_utterance.text


def test_checks_are_drawn_at_random_from_the_repository(db):
    dataset = checked_dataset(units=1, clean=40)
    dataset.annotators_per_item = 8
    dataset.save()
    annotation_open(dataset=dataset)
    shown = {work_through(dataset, member(dataset))[0] for _ in range(8)}
    assert len(shown) > 2


def test_short_lines_are_never_checks(db):
    dataset = checked_dataset(units=4, clean=0)
    short = UtteranceFactory(
        repository=dataset.attention_check_repository, text="Okay.", n_tokens=ATTENTION_CHECK_MIN_TOKENS - 1
    )
    assert work_through(dataset, member(dataset)) == []
    assert not Assignment.objects.filter(check_utterance=short).exists()


def test_without_a_repository_units_carry_no_check(db):
    dataset = checked_dataset(units=3)
    dataset.attention_check_repository = None
    dataset.save()
    assert work_through(dataset, member(dataset)) == []
    assert Assignment.objects.filter(question__dataset=dataset).count() == 3  # the units themselves go out


def test_crowd_leases_carry_checks_from_the_repository_too(db):
    dataset = checked_dataset(units=2)
    forbidden = dataset_texts()
    annotator = member(dataset)
    assignment = unit_lease_question(annotator=annotator, question_id=dataset.work.first().question_id)
    [check] = [item for item in assignment.items if item.get("check")]
    assert text_hash(check["text"]) not in forbidden and assignment.check_utterance is not None


def test_a_rating_dataset_gets_checks_from_its_repository(db):
    dataset = checked_dataset(units=2)
    dataset.task = "rate"
    dataset.save()
    annotator = member(dataset)
    assignment = unit_next(annotator=annotator)
    answers = {item["key"]: Answer(1 if item.get("check") else 4) for item in assignment.items}
    unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers)
    assignment.refresh_from_db()
    assert (assignment.check_value, assignment.check_passed) == (1, True)


def test_leasing_a_unit_with_a_check_costs_two_queries_more_than_without(db):
    dataset = checked_dataset(units=4, clean=3000)
    dataset.attention_check_rate = 0
    dataset.save()
    with CaptureQueriesContext(connection) as without:
        assert unit_next(annotator=member(dataset)).check_utterance is None
    dataset.attention_check_rate = 1.0
    dataset.save()
    with CaptureQueriesContext(connection) as with_check:
        assert unit_next(annotator=member(dataset)).check_utterance is not None
    # the repository's id bounds, then one probe: the 3,000 usable lines are never read
    assert len(with_check) == len(without) + 2


def test_the_search_for_an_unused_line_is_bounded(db, django_assert_max_num_queries):
    # given a repository with nothing left for this annotator
    dataset = checked_dataset(units=2, clean=0)
    annotator = member(dataset)
    # then the bounds query and four probes, and no check
    with django_assert_max_num_queries(5):
        assert attention_check_pick(dataset=dataset, annotator=annotator, rng=random.Random(0)) is None


def test_building_pools_sets_the_repository_only_when_none_is_chosen(db):
    dataset = DatasetFactory(name="pools")
    first, second = RepositoryFactory(name="first"), RepositoryFactory(name="second")
    assert dataset_check_repository_adopt(dataset=dataset, repository=first)
    assert not dataset_check_repository_adopt(dataset=dataset, repository=second)
    dataset.refresh_from_db()
    assert dataset.attention_check_repository == first


def test_the_migration_gives_datasets_the_repository_of_most_of_their_candidates(db):
    migration = importlib.import_module("annotation.migrations.0014_attention_checks_from_a_repository")
    dataset = DatasetFactory(name="existing")
    question = QuestionFactory(dataset=dataset)
    few, most = RepositoryFactory(name="few"), RepositoryFactory(name="most")
    for repository, n in ((few, 1), (most, 2)):
        for _ in range(n):
            CandidateFactory(question=question, utterance=UtteranceFactory(repository=repository))
    bare = DatasetFactory(name="imported-only")
    CandidateFactory(question=QuestionFactory(dataset=bare))
    migration.repositories_of_candidates(apps, None)
    dataset.refresh_from_db()
    bare.refresh_from_db()
    assert (dataset.attention_check_repository, bare.attention_check_repository) == (most, None)


def test_the_dashboard_says_why_a_dataset_gets_no_check(admin_client, db):
    DatasetFactory(name="no-repository", attention_check_rate=0.2)
    html = admin_client.get(reverse("dashboard-dataset", args=["no-repository"])).content.decode()
    assert "no attention checks: this dataset has no attention-check repository" in html


def test_the_dashboard_names_the_repository_checks_come_from(admin_client, db):
    dataset = DatasetFactory(name="with-repository", attention_check_rate=0.2)
    attention_check_repository(dataset, utterances=1, name="subtitles")
    html = admin_client.get(reverse("dashboard-dataset", args=["with-repository"])).content.decode()
    assert "attention checks in 20 % of units, unrelated utterances of the repository subtitles" in html


def test_the_admin_sets_the_repository_and_says_why_there_is_none(admin_client, db):
    dataset = DatasetFactory(name="admin-set", attention_check_rate=0.2)
    page = admin_client.get(reverse("admin:annotation_dataset_change", args=[dataset.pk])).content.decode()
    assert 'name="attention_check_repository"' in page and "has no attention-check repository" in page
