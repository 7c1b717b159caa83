"""What a submission locks on PostgreSQL: the unit's own row only, so that it waits neither on
the dataset row every submission shares nor on a question another annotator is being given."""

import threading

import pytest
from django.db import connection, transaction

from annotation.models import Dataset, DatasetMembership, Question
from annotation.services.assignment import annotation_open, unit_next
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


def test_a_submission_waits_on_neither_the_dataset_nor_a_question_being_leased():
    dataset = DatasetFactory(name="locks", adaptive_stopping=False, attention_check_rate=0)
    question = QuestionFactory(dataset=dataset)
    for i in range(3):
        CandidateFactory(question=question, text=f"reply {i}")
    annotation_open(dataset=dataset)
    annotator = AnnotatorFactory()
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    assignment = unit_next(annotator=annotator)
    held, release = threading.Event(), threading.Event()
    locks = [
        # another annotator's new unit on this question: its insert key-share locks the question
        (f"SELECT id FROM {Question._meta.db_table} WHERE id = %s FOR KEY SHARE", [question.pk]),
        # any transaction holding the dataset row (settings saved in the admin, a membership change)
        (f"SELECT id FROM {Dataset._meta.db_table} WHERE id = %s FOR UPDATE", [dataset.pk]),
    ]
    other = threading.Thread(target=hold_locks, args=(locks, held, release))
    other.start()
    try:
        assert held.wait(timeout=10)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")
        result = unit_submit(
            assignment_id=assignment.pk,
            annotator=annotator,
            answers={item["key"]: Answer(2) for item in assignment.items},
        )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
        release.set()
        other.join(timeout=30)
    assert result.created and result.assignment.status == "submitted"
