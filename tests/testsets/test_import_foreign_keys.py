"""A large test-set import on PostgreSQL checks its foreign keys once after the load (core.bulk_keys):
the same rows as the per-row checks, the keys valid again after the commit, an orphan refused, and
per-row checks when the load is small or another transaction holds a table."""

import json

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction

from annotation.models import Candidate, Score
from core.bulk_keys import deferred_checks_run, foreign_keys_after_load, load_fields
from testsets.services.import_tsv import rows_estimate, testset_import

postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's per-row key checks")

TSV = "".join(f"Hi {i}.\tHello {i}.\tCoffee {i}?\tYes {i}.\tThe bus {i}.\tNo tea {i}.\tLater {i}.\n" for i in range(40))
SCORES = "".join(
    json.dumps([[5, 5, 4, 5, 5], [1, 1, 2, 1, 1], [2, 1, 1, 1, 3], [0, 1, 1, 1, 1]]) + "\n" for _ in range(40)
)


def foreign_keys() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid), convalidated FROM pg_constraint "
            "WHERE contype = 'f' AND conrelid::regclass::text LIKE 'annotation_%' ORDER BY 1, 2"
        )
        return cursor.fetchall()


def imported(write_file, name: str) -> dict:
    return testset_import(
        tsv_path=write_file(f"{name}.tsv", TSV), scores_path=write_file(f"{name}.jsonl", SCORES), dataset_name=name
    )


def test_the_estimate_counts_contexts_turns_questions_candidates_and_scores(write_file):
    path = write_file("t.tsv", TSV)
    # 40 lines: context + 3 turns + question, 4 candidates with 5 scores each
    assert rows_estimate(tsv_path=path, context_turns=3, scores=True) == 40 * (1 + 3 + 1) + 40 * 4 * 6
    assert rows_estimate(tsv_path=path, context_turns=3, scores=False) == 40 * 5 + 40 * 4


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_large_load_checks_the_keys_after_it_and_leaves_them_valid(write_file, settings):
    settings.WELLCHOSEN_BULK_LOAD_MIN_ROWS = 100
    before = foreign_keys()
    report = imported(write_file, "large")
    assert report["foreign_keys"]["mode"] == "after the load"
    assert report["foreign_keys"]["keys"] == 7
    assert (report["questions"], report["scores"]) == (40, 800)
    # the same keys, with the same definitions, validated again after the commit
    assert foreign_keys() == before
    assert all(valid for *_, valid in foreign_keys())


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_both_ways_store_the_same_rows(write_file, settings):
    settings.WELLCHOSEN_BULK_LOAD_MIN_ROWS = 100
    after = imported(write_file, "after")
    settings.WELLCHOSEN_BULK_LOAD_MIN_ROWS = 0
    per_row = imported(write_file, "per_row")
    assert (after["foreign_keys"]["mode"], per_row["foreign_keys"]["mode"]) == ("after the load", "per row")

    def stored(name):
        return list(
            Score.objects.filter(candidate__question__dataset__name=name)
            .order_by("id")
            .values_list("candidate__text", "annotator__external_id", "value")
        )

    assert [(t, a.split("#")[1], v) for t, a, v in stored("after")] == [
        (t, a.split("#")[1], v) for t, a, v in stored("per_row")
    ]


def test_a_small_load_keeps_the_per_row_checks(db, write_file, settings):
    settings.WELLCHOSEN_BULK_LOAD_MIN_ROWS = 100_000
    report = imported(write_file, "small")
    assert report["foreign_keys"]["mode"] == "per row"
    assert report["foreign_keys"]["keys"] == 0


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_row_pointing_nowhere_is_refused_and_nothing_stays(settings):
    settings.WELLCHOSEN_BULK_LOAD_MIN_ROWS = 1
    fields = load_fields((Score, "candidate"), (Score, "annotator"))
    before = foreign_keys()
    with pytest.raises(IntegrityError, match=r"annotation_score row \d+: \w+_id = 999999 is not in annotation_"):
        with transaction.atomic():
            with foreign_keys_after_load(fields=fields, rows=10) as checks:
                assert checks.mode == "after the load"
                with connection.cursor() as cursor:
                    cursor.execute(
                        "INSERT INTO annotation_score (candidate_id, annotator_id, value, assignment_ref, labels, "
                        "counted, created_at) VALUES (999999, 999999, 3, '', '[]', true, now())"
                    )
    assert Score.objects.count() == 0
    assert foreign_keys() == before


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_table_held_by_another_transaction_keeps_the_per_row_checks(write_file, settings):
    settings.WELLCHOSEN_BULK_LOAD_MIN_ROWS = 100
    settings.WELLCHOSEN_BULK_LOAD_LOCK_TIMEOUT_MS = 200
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params) as other:
        # another session reading candidates, its transaction open
        other.execute("SELECT count(*) FROM annotation_candidate").fetchone()
        report = imported(write_file, "busy")
        other.rollback()
    assert report["foreign_keys"]["mode"] == "per row"
    assert "busy" in report["foreign_keys"]["reason"]
    assert Candidate.objects.filter(question__dataset__name="busy").count() == 160
    assert all(valid for *_, valid in foreign_keys())


def insert_score_pointing_nowhere() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO annotation_score (candidate_id, annotator_id, value, assignment_ref, labels, "
            "counted, created_at) VALUES (999999, 999999, 3, '', '[]', true, now())"
        )


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_the_deferred_checks_run_when_asked_not_at_the_commit():
    with transaction.atomic():
        insert_score_pointing_nowhere()  # queued for the commit
        with pytest.raises(IntegrityError, match="annotation_score"):
            deferred_checks_run()
    assert Score.objects.count() == 0


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_writes_after_the_deferred_checks_ran_are_deferred_again():
    with pytest.raises(IntegrityError):
        with transaction.atomic():
            deferred_checks_run()
            insert_score_pointing_nowhere()  # no error here: checked at the commit
    assert Score.objects.count() == 0


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_the_deferred_checks_need_the_transaction_they_run_for():
    with pytest.raises(RuntimeError, match="needs the transaction"):
        deferred_checks_run()
