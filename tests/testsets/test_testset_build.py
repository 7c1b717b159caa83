import pytest

from annotation.models import Question, Score
from core.errors import UserError
from tests.factories import AnnotatorFactory, DatasetFactory, ScoreFactory
from testsets.models import TestSet, TestSetCandidate
from testsets.services.build import testset_build

GOOD_GT = [5, 5, 4, 5, 5]
WRONG = [1, 1, 2, 1, 1]
ACCEPTABLE = [4, 4, 5, 1, 2]


@pytest.fixture
def dataset(db, scored_question):
    dataset = DatasetFactory(name="build")
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 4)
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 7 + [ACCEPTABLE])
    scored_question(dataset=dataset, gt=[2, 2, 2, 5, 5], false=[WRONG] * 4)  # dropped
    return dataset


def chosen(testset):
    return [
        (
            item.question.derived_from_id is not None,
            [(c.candidate_id, c.position, c.is_ground_truth) for c in item.candidates.order_by("position")],
        )
        for item in testset.items.select_related("question").order_by("position")
    ]


def test_each_question_gets_one_ground_truth_and_three_false_candidates(dataset):
    testset = testset_build(dataset_name="build", name="r1", seed=1)
    items = chosen(testset)
    # 2 passing questions, and one derived question from the one with >= 6 survivors
    assert [derived for derived, _ in items] == [False, False, True]
    for _, candidates in items:
        assert len(candidates) == 4
        assert sum(is_gt for _, _, is_gt in candidates) == 1
        assert sorted(pos for _, pos, _ in candidates) == [0, 1, 2, 3]


def test_derived_question_uses_the_acceptable_candidate_as_ground_truth(dataset):
    testset = testset_build(dataset_name="build", name="r1", seed=1)
    derived = Question.objects.get(derived_from__isnull=False)
    assert derived.ground_truth == derived.derived_ground_truth.text
    assert derived.context_id == derived.derived_from.context_id
    gt = TestSetCandidate.objects.get(item__testset=testset, item__question=derived, is_ground_truth=True)
    assert gt.candidate_id == derived.derived_ground_truth_id
    # and its false candidates are not those of the original question in this test set
    original_false = set(
        TestSetCandidate.objects.filter(
            item__testset=testset, item__question=derived.derived_from, is_ground_truth=False
        ).values_list("candidate_id", flat=True)
    )
    derived_false = set(
        TestSetCandidate.objects.filter(
            item__testset=testset, item__question=derived, is_ground_truth=False
        ).values_list("candidate_id", flat=True)
    )
    assert original_false.isdisjoint(derived_false)


def test_same_seed_gives_the_same_test_set(dataset):
    first = testset_build(dataset_name="build", name="r1", seed=7)
    second = testset_build(dataset_name="build", name="r2", seed=7)
    assert chosen(first) == chosen(second)
    assert first.manifest["files"]["tsv"]["sha256"] == second.manifest["files"]["tsv"]["sha256"]


def test_other_seeds_change_the_choice_or_order(dataset):
    base = chosen(testset_build(dataset_name="build", name="r0", seed=0))
    others = [chosen(testset_build(dataset_name="build", name=f"s{s}", seed=s)) for s in range(1, 6)]
    assert any(o != base for o in others)


def test_derived_questions_are_reused_across_test_sets(dataset):
    testset_build(dataset_name="build", name="r1", seed=1)
    testset_build(dataset_name="build", name="r2", seed=1)
    assert Question.objects.filter(derived_from__isnull=False).count() == 1


def test_manifest_records_rules_seed_counts_and_agreement(dataset):
    manifest = testset_build(dataset_name="build", name="r1", seed=3).manifest
    assert manifest["seed"] == 3 and manifest["rules"]["version"] == 1
    assert manifest["rules"]["acceptable_min_count"] == 3
    assert manifest["counts"]["questions"] == 3 and manifest["counts"]["derived_questions"] == 1
    assert manifest["counts"]["source_questions_by_ground_truth"]["rejected"] == 1
    assert manifest["agreement"]["dataset"]["raters"] == 5
    assert set(manifest["files"]) == {"tsv", "human_scores", "jsonl", "csv"}


def test_manifest_records_the_stopping_tolerance_and_decisions_on_fewer_scores(db, scored_question):
    # given a dataset stopping at a 10 % tolerance whose question's reply has two scores of 1 (the
    # model's call: kept) beside a ground truth with five
    dataset = DatasetFactory(name="early", stopping_tolerance=0.1, spot_check_rate=0)
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 3 + [[1, 1]])
    stopping = testset_build(dataset_name="early", name="r-early", seed=3).manifest["stopping"]
    assert stopping["tolerance"] == 0.1
    # every other response has its five scores: only the short reply rests on fewer, by the model
    assert (stopping["decisions"], stopping["decisions_on_fewer_scores"], stopping["decisions_by_model"]) == (5, 1, 1)
    assert 0 < stopping["expected_changed"] < 0.1


def test_the_manifest_counts_early_decisions_of_the_test_set_apart_from_the_dataset_s(db, scored_question):
    # given, at a 10 % tolerance: a question whose three replies stopped at two scores of 1 (kept,
    # by the model; all three chosen) and whose fourth, ungrammatical after three 0s, is not chosen;
    # and a question dropped (ground truth rejected after three low scores) whose replies also stopped
    dataset = DatasetFactory(name="early-apart", stopping_tolerance=0.1, spot_check_rate=0)
    scored_question(dataset=dataset, gt=GOOD_GT, false=[[1, 1]] * 3 + [[0, 0, 0]])
    scored_question(dataset=dataset, gt=[1, 1, 1], false=[[1, 1]] * 3)
    stopping = testset_build(dataset_name="early-apart", name="r-apart", seed=3).manifest["stopping"]
    # then the test set's four responses: the three short replies rest on fewer scores, by the model
    assert stopping["testset"]["decisions"] == 4
    assert (stopping["testset"]["decisions_on_fewer_scores"], stopping["testset"]["decisions_by_model"]) == (3, 3)
    # while the dataset's count takes in the replies and ground truth that are not in the test set
    assert (stopping["decisions_on_fewer_scores"], stopping["decisions_by_model"]) == (8, 6)


def test_a_test_set_freezes_the_scores_it_was_built_with(dataset):
    # given a built test set
    testset = testset_build(dataset_name="build", name="r1", seed=1)
    candidate = TestSetCandidate.objects.filter(item__testset=testset).first()
    before = list(candidate.scores)
    # when a new annotator scores one of its candidates later
    ScoreFactory(candidate=candidate.candidate, annotator=AnnotatorFactory(), value=5)
    # then the test set still holds the scores it was built with
    candidate.refresh_from_db()
    assert candidate.scores == before and len(before) == 5
    assert Score.objects.filter(candidate=candidate.candidate).count() == 6


def test_test_set_names_are_never_reused(dataset):
    testset_build(dataset_name="build", name="r1")
    with pytest.raises(UserError, match="a test set named 'r1' exists already; test sets are frozen"):
        testset_build(dataset_name="build", name="r1")
    assert TestSet.objects.count() == 1


def test_nothing_buildable_is_an_error_and_leaves_no_test_set(db, scored_question):
    dataset = DatasetFactory(name="empty")
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG])
    with pytest.raises(UserError, match="no question passes the rules with 3 false candidates") as refused:
        testset_build(dataset_name="empty", name="r1")
    assert "1 with fewer than 3 false candidates kept" in str(refused.value)  # the preview's reason
    assert not TestSet.objects.exists()


def test_unknown_dataset_is_an_error(db):
    with pytest.raises(UserError, match="no dataset 'nope'"):
        testset_build(dataset_name="nope", name="r1")


def test_an_unknown_rules_version_is_an_error_and_leaves_no_test_set(dataset):
    with pytest.raises(UserError, match="no filter rules version 99"):
        testset_build(dataset_name="build", name="r1", rules_version=99)
    assert not TestSet.objects.exists()


def test_a_database_without_filter_rules_is_a_clear_error_and_leaves_no_test_set(dataset):
    from annotation.models import FilterRules

    FilterRules.objects.all().delete()
    with pytest.raises(UserError, match="no filter rules in this database"):
        testset_build(dataset_name="build", name="r1")
    assert not TestSet.objects.exists()
