"""The per-response counts aggregated once (selectors_response_counts): every read of a dataset's
responses inside the block gives what it gives when it aggregates the scores itself."""

import dataclasses

import pytest
from django.db import connection, transaction

from annotation.models import FilterRules, Score
from annotation.selectors import (
    FilterPreview,
    dataset_stopping_summary,
    filter_preview,
    filter_rules_current,
    question_pools_stream,
)
from annotation.selectors_agreement import dataset_agreement, response_category_table, score_category_table
from annotation.selectors_dataset import candidate_verdicts_by_source
from annotation.selectors_response_counts import (
    RESPONSE_COUNTS_TABLE,
    response_counts_materialised,
    response_counts_table,
)
from annotation.selectors_stopping import stopping_prior
from tests.factories import AnnotatorFactory, CandidateFactory, DatasetFactory, ScoreFactory
from testsets.selectors import testset_agreement
from testsets.services.build import testset_build


@pytest.fixture
def mixed_dataset(db, scored_question):
    """Responses of every kind (complete, stopped early, undecided, a rejected ground truth, spot
    checks), a candidate without scores, a score not confirmed, an excluded annotator's scores,
    and another dataset scored by the same annotators."""
    dataset = DatasetFactory(name="mixed", stopping_tolerance=0.1, spot_check_rate=0.5)
    annotators = AnnotatorFactory.create_batch(5)
    patterns = [[1, 1], [0, 0, 0], [4, 4, 4], [3, 1], [5], [1, 1, 2, 1, 1], [4, 4, 5, 1, 2], [2, 5, 3], [0, 1, 0, 0, 1]]
    for i in range(16):
        gt = [[5, 5, 4, 5, 5], [5, 5], [1, 1, 1], [2, 5], [5, 4, 5, 5, 5]][i % 5]
        question = scored_question(dataset=dataset, gt=gt, false=patterns[i % 3 :: 2], annotators=annotators)
    CandidateFactory(question=question, text="never scored")
    Score.objects.filter(candidate__question=question).update(counted=False)
    excluded = AnnotatorFactory(scores_excluded=True)
    for candidate in dataset.questions.first().candidates.all():
        ScoreFactory(candidate=candidate, annotator=excluded, value=5)
    other = DatasetFactory(name="other")
    scored_question(dataset=other, gt=[1, 1, 1, 1, 1], false=[[5, 5, 5, 5, 5]], annotators=annotators)
    return dataset


def reads(dataset, rules) -> dict:
    """Every read of the dataset's responses that a test-set build makes."""
    return {
        "pools": [dataclasses.asdict(pool) for pool in question_pools_stream(dataset=dataset, rules=rules)],
        "prior": stopping_prior(dataset=dataset, rules=rules, fresh=True),
        "stopping": dataset_stopping_summary(dataset=dataset, rules=rules, fresh=True),
        "by_source": candidate_verdicts_by_source(dataset=dataset, rules=rules),
        "agreement": dataset_agreement(dataset=dataset),
    }


def test_every_read_from_the_materialised_counts_equals_the_read_of_the_scores(mixed_dataset):
    rules = filter_rules_current()
    expected = reads(mixed_dataset, rules)
    assert expected["stopping"]["decisions_by_model"] > 0 and expected["stopping"]["decisions"] > 0
    with transaction.atomic(), response_counts_materialised(dataset=mixed_dataset, rules=rules):
        assert response_counts_table(dataset_id=mixed_dataset.pk, rules=rules) == RESPONSE_COUNTS_TABLE
        assert reads(mixed_dataset, rules) == expected


def test_another_dataset_or_other_rules_read_the_scores_themselves(mixed_dataset):
    rules = filter_rules_current()
    other = type(mixed_dataset).objects.get(name="other")
    thresholds = {name: getattr(rules, name) for name in FilterRules.THRESHOLD_FIELDS}
    stricter = FilterRules(**{**thresholds, "acceptable_min_score": rules.acceptable_min_score + 1})
    expected_other, expected_stricter = reads(other, rules), reads(mixed_dataset, stricter)
    with transaction.atomic(), response_counts_materialised(dataset=mixed_dataset, rules=rules):
        assert response_counts_table(dataset_id=other.pk, rules=rules) is None
        assert response_counts_table(dataset_id=mixed_dataset.pk, rules=stricter) is None
        assert reads(other, rules) == expected_other
        assert reads(mixed_dataset, stricter) == expected_stricter


def test_the_table_is_gone_after_the_block(mixed_dataset):
    with transaction.atomic():
        with response_counts_materialised(dataset=mixed_dataset, rules=filter_rules_current()):
            pass
        assert response_counts_table(dataset_id=mixed_dataset.pk) is None
        with connection.cursor() as cursor:
            # the name is free: a second block creates the table again
            cursor.execute(f"CREATE TEMPORARY TABLE {RESPONSE_COUNTS_TABLE} (id integer)")
            cursor.execute(f"DROP TABLE {RESPONSE_COUNTS_TABLE}")


def test_a_build_records_the_summaries_read_from_the_scores(mixed_dataset):
    # given the dataset's summaries read from its scores, outside any build
    rules = filter_rules_current()
    expected = reads(mixed_dataset, rules)
    # when a test set is built (its reads come from the counts aggregated once)
    testset = testset_build(dataset_name="mixed", name="counted-once", false_per_question=1)
    # then its manifest records the same summaries, and the release's agreement read from the scores
    manifest = testset.manifest
    assert manifest["agreement"]["dataset"] == expected["agreement"]
    assert manifest["agreement"]["release"] == testset_agreement(testset=testset)
    assert manifest["agreement"]["release"]["items"] > 0
    stopping = {key: value for key, value in expected["stopping"].items() if key in manifest["stopping"]}
    assert {key: manifest["stopping"][key] for key in stopping} == stopping
    by_source = [{key: row[key] for key in manifest["candidates_by_source"][0]} for row in expected["by_source"]]
    assert manifest["candidates_by_source"] == by_source
    assert manifest["counts"]["source_questions"] == len(expected["pools"])


def test_the_category_table_has_the_rows_of_the_scores(mixed_dataset):
    scores = Score.objects.counted().filter(candidate__question__dataset=mixed_dataset)
    live = score_category_table(scores=scores).tolist()
    with transaction.atomic(), response_counts_materialised(dataset=mixed_dataset, rules=filter_rules_current()):
        counted = response_category_table(table=RESPONSE_COUNTS_TABLE).tolist()
    assert len(live) > 40
    assert sorted(counted) == sorted(live)


def test_a_block_inside_another_keeps_the_outer_table(mixed_dataset):
    rules = filter_rules_current()
    other = type(mixed_dataset).objects.get(name="other")
    expected = reads(other, rules)
    with transaction.atomic(), response_counts_materialised(dataset=mixed_dataset, rules=rules):
        with response_counts_materialised(dataset=other, rules=rules):
            assert response_counts_table(dataset_id=other.pk) is None
            assert reads(other, rules) == expected
        assert response_counts_table(dataset_id=mixed_dataset.pk, rules=rules) == RESPONSE_COUNTS_TABLE
        assert reads(mixed_dataset, rules)["pools"]


def test_the_preview_is_the_same_as_its_pools_read_from_the_scores(mixed_dataset):
    rules = filter_rules_current()
    expected = FilterPreview.start(dataset=mixed_dataset, rules=rules, false_per_question=3)
    for pool in question_pools_stream(dataset=mixed_dataset, rules=rules):
        expected.add(pool)
    assert filter_preview(dataset=mixed_dataset, rules=rules, false_per_question=3) == expected
    assert response_counts_table(dataset_id=mixed_dataset.pk) is None
