"""What a submission locks on PostgreSQL: the unit's own row only, so that it waits neither on
the dataset row every submission shares nor on a question another annotator is being given."""

import threading

import pytest
from django.db import connection, transaction

from annotation.models import Dataset, DatasetMembership, Question
from annotation.services.assignment import annotation_open, unit_lease_question, unit_next
from annotation.services.submission import Answer, unit_submit
from tests.factories import AnnotatorFactory, CandidateFactory, DatasetFactory, QuestionFactory

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are PostgreSQL's (SQLite locks the file)"),
]


def hold_locks(sql_params: list[tuple[str, list]], held: threading.Event, release: threading.Event) -> None:
    """Another session's transaction that holds these row locks until ``release``."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            for sql, params in sql_params:
                cursor.execute(sql, params)
            held.set()
            release.wait(timeout=30)
    finally:
        connection.close()


def open_question():
    dataset = DatasetFactory(name="locks", adaptive_stopping=False, attention_check_rate=0)
    question = QuestionFactory(dataset=dataset)
    for i in range(3):
        CandidateFactory(question=question, text=f"reply {i}")
    annotation_open(dataset=dataset)
    annotator = AnnotatorFactory()
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    return dataset, question, annotator


def while_held(locks: list[tuple[str, list]], action):
    """``action()`` while another transaction holds ``locks``; a wait of 2 s raises instead."""
    held, release = threading.Event(), threading.Event()
    other = threading.Thread(target=hold_locks, args=(locks, held, release))
    other.start()
    try:
        assert held.wait(timeout=10)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")
        return action()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
        release.set()
        other.join(timeout=30)


def dataset_row_lock(dataset) -> tuple[str, list]:
    """Any transaction holding the dataset row (settings saved in the admin, a membership change)."""
    return (f"SELECT id FROM {Dataset._meta.db_table} WHERE id = %s FOR UPDATE", [dataset.pk])


def test_a_submission_waits_on_neither_the_dataset_nor_a_question_being_leased():
    dataset, question, annotator = open_question()
    assignment = unit_next(annotator=annotator)
    locks = [
        # another annotator's new unit on this question: its insert key-share locks the question
        (f"SELECT id FROM {Question._meta.db_table} WHERE id = %s FOR KEY SHARE", [question.pk]),
        dataset_row_lock(dataset),
    ]
    result = while_held(
        locks,
        lambda: unit_submit(
            assignment_id=assignment.pk,
            annotator=annotator,
            answers={item["key"]: Answer(2) for item in assignment.items},
        ),
    )
    assert result.created and result.assignment.status == "submitted"


def test_leasing_a_named_unit_does_not_wait_on_the_dataset_row():
    dataset, question, annotator = open_question()
    assignment = while_held(
        [dataset_row_lock(dataset)], lambda: unit_lease_question(annotator=annotator, question_id=question.pk)
    )
    assert assignment.question_id == question.pk and assignment.status == "leased"
