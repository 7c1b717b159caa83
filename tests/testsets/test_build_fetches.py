"""The build writes its candidates from one streamed query, a fetch at a time; a question whose
rows straddle two fetches is written whole, with every frozen score."""

import gc

import pytest

from tests.factories import DatasetFactory
from testsets.models import TestSetCandidate
from testsets.services import build, rows
from testsets.services.build import testset_build


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
        .values_list("item__question_id", "candidate_id", "position", "is_ground_truth", "scores")
    )


def test_fetches_of_seven_score_rows_write_what_one_fetch_writes(dataset, monkeypatch):
    whole = frozen(testset_build(dataset_name="fetches", name="whole", seed=4))
    monkeypatch.setattr(rows, "_FETCH", 7)  # 20 score rows a question: every question straddles
    fetched = testset_build(dataset_name="fetches", name="fetched", seed=4)
    assert frozen(fetched) == whole
    assert len(whole) == 24 and all(len(scores) == 5 for *_, scores in whole)
    assert fetched.manifest["counts"]["scores"] == 24 * 5


def test_the_build_runs_without_the_cyclic_collector(dataset, monkeypatch):
    seen = []
    real = build.testset_manifest_audit

    def audit(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "testset_manifest_audit", audit)
    testset_build(dataset_name="fetches", name="paused", seed=4)
    assert seen == [False] and gc.isenabled()
