"""The build writes its candidates either streamed (one query over their scores, a fetch at a time;
any database) or aggregated by the server (PostgreSQL), with the same rows and frozen scores
(testsets.services.candidate_rows)."""

import gc

import pytest
from django.db import connection

from annotation.models import Annotator, Score
from tests.factories import DatasetFactory
from testsets.models import TestSetCandidate
from testsets.services import build, candidate_rows, rows
from testsets.services.build import testset_build
from testsets.services.candidate_rows import AggregatedCandidateRows, StreamedCandidateRows


@pytest.fixture
def dataset(db, scored_question):
    dataset = DatasetFactory(name="fetches")
    for i in range(6):
        scored_question(
            dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1], [0, 1, 1, 2, 1], [i % 3, 1, 1, 0, 1]]
        )
    return dataset


def frozen(testset) -> list[tuple]:
    return list(
        TestSetCandidate.objects.filter(item__testset=testset)
        .order_by("item__position", "position")
        .values_list("id", "item__question_id", "candidate_id", "position", "is_ground_truth", "scores")
    )


def written_by(monkeypatch, cls) -> None:
    monkeypatch.setattr(rows, "candidate_rows_writer", lambda writer, *, staged: cls(writer, staged=staged))


def without_ids(rows_: list[tuple]) -> list[tuple]:
    return [row[1:] for row in rows_]


def test_fetches_of_seven_score_rows_write_what_one_fetch_writes(dataset, monkeypatch):
    written_by(monkeypatch, StreamedCandidateRows)
    whole = frozen(testset_build(dataset_name="fetches", name="whole", seed=4))
    monkeypatch.setattr(candidate_rows, "_FETCH", 7)  # 20 score rows a question: every question straddles
    fetched = testset_build(dataset_name="fetches", name="fetched", seed=4)
    assert without_ids(frozen(fetched)) == without_ids(whole)
    assert len(whole) == 24 and all(len(scores) == 5 for *_, scores in whole)
    assert fetched.manifest["counts"]["scores"] == 24 * 5


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the server-aggregated rows are PostgreSQL's")
def test_the_servers_aggregated_rows_are_the_streamed_rows(dataset, monkeypatch):
    # given an annotator whose scores are excluded and a score that does not count
    excluded = Annotator.objects.order_by("id").first()
    Annotator.objects.filter(pk=excluded.pk).update(scores_excluded=True)
    Score.objects.filter(pk=Score.objects.exclude(annotator=excluded).order_by("id").first().pk).update(counted=False)
    # when the same test set is built both ways, a few rows a fetch
    monkeypatch.setattr(candidate_rows, "_FETCH", 2)
    written_by(monkeypatch, StreamedCandidateRows)
    streamed = testset_build(dataset_name="fetches", name="streamed", seed=4)
    written_by(monkeypatch, AggregatedCandidateRows)
    aggregated = testset_build(dataset_name="fetches", name="aggregated", seed=4)
    # then the rows are the same, in the same key order, with the same frozen scores and counts
    a, b = frozen(streamed), frozen(aggregated)
    assert without_ids(a) == without_ids(b)
    assert [row[0] - a[0][0] for row in a] == [row[0] - b[0][0] for row in b]  # keys in the same order
    assert streamed.manifest["counts"] == aggregated.manifest["counts"]
    assert {k: f["sha256"] for k, f in streamed.manifest["files"].items()} == {
        k: f["sha256"] for k, f in aggregated.manifest["files"].items()
    }
    assert all(label != f"{excluded.provider}:{excluded.external_id}" for *_, scores in b for label, _ in scores)


def test_postgresql_aggregates_and_other_databases_stream(db):
    expected = AggregatedCandidateRows if connection.vendor == "postgresql" else StreamedCandidateRows
    assert type(candidate_rows.candidate_rows_writer(None, staged="t")) is expected


def test_the_build_runs_without_the_cyclic_collector(dataset, monkeypatch):
    seen = []
    real = build.testset_manifest_audit

    def audit(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "testset_manifest_audit", audit)
    testset_build(dataset_name="fetches", name="paused", seed=4)
    assert seen == [False] and gc.isenabled()
