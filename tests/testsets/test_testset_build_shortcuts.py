"""A shortcut-aware build removes a length shortcut that the paper's random choice leaves, after the
filter rules and never instead of them, and records what it did."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Candidate, Score
from core.errors import UserError
from core.text import text_hash
from tests.factories import AnnotatorFactory, CandidateFactory, DatasetFactory, QuestionFactory
from tests.testsets.shortcut_sets import skewed_length_pools, skewed_style_pools
from testsets.services.build import testset_build
from testsets.shortcuts.balance import BalanceOptions

GOOD_GT = [5, 5, 4, 5, 5]
WRONG = [1, 1, 2, 1, 1]
UNGRAMMATICAL = [0, 0, 0, 1, 1]


ACCEPTABLE = [4, 4, 5, 3, 2]


def scored_dataset(name: str, pools: list[tuple[str, list[str]]], *, acceptable: bool = False):
    """A dataset of ``pools`` (ground truth, false candidates), every false candidate scored as
    clearly wrong, and one ungrammatical candidate each, longer than the rest, that the rules must
    drop."""
    dataset = DatasetFactory(name=name)
    annotators = AnnotatorFactory.create_batch(5)
    candidates, values = [], []
    for gt, false in pools:
        question = QuestionFactory(dataset=dataset, ground_truth=gt)
        ground_truth = question.candidates.get(is_ground_truth=True)
        values.append((ground_truth, GOOD_GT))
        texts = [*false, "ungrammatical ungrammatical ungrammatical ungrammatical ungrammatical reply"]
        if acceptable:
            texts.append(f"an acceptable reply as long as the ground truth is {gt}")
        for i, text in enumerate(texts):
            candidates.append(
                CandidateFactory.build(question=question, text=text, text_hash=text_hash(f"{text} {i}"), rank=i + 1)
            )
            values.append(
                (candidates[-1], WRONG if i < len(false) else UNGRAMMATICAL if i == len(false) else ACCEPTABLE)
            )
    Candidate.objects.bulk_create(candidates)
    Score.objects.bulk_create(
        Score(candidate=candidate, annotator=annotator, value=value)
        for candidate, row in values
        for annotator, value in zip(annotators, row, strict=True)
    )
    return dataset


@pytest.fixture
def skewed_dataset(db):
    """200 questions whose ground truth is longer than 9 of its 12 false candidates."""
    return scored_dataset("skewed", skewed_length_pools(n=200))


def test_a_style_shortcut_is_left_by_the_random_choice_and_removed_by_the_shortcut_aware_build(db):
    scored_dataset("styled", skewed_style_pools(n=200))
    assert "surface_classifier" in flagged(testset_build(dataset_name="styled", name="random", seed=1))
    balanced = testset_build(dataset_name="styled", name="balanced", seed=1, balance=BalanceOptions(rounds=3, seed=1))
    assert flagged(balanced) == set()


def flagged(testset) -> set[str]:
    return set(testset.manifest["shortcut_audit"]["above_chance"])


def test_the_random_choice_leaves_the_length_shortcut_and_the_shortcut_aware_build_removes_it(skewed_dataset):
    at_random = testset_build(dataset_name="skewed", name="random", seed=1)
    assert "longest" in flagged(at_random)
    balanced = testset_build(dataset_name="skewed", name="balanced", seed=1, balance=BalanceOptions(rounds=2, seed=1))
    assert "longest" not in flagged(balanced)
    record = balanced.manifest["shortcut_balance"]
    assert record["rounds"] == 2 and record["seed"] == 1 and record["questions"] == 200
    assert 0 <= record["unbalanced"] < 200 and len(record["classifier_accuracy_by_round"]) == 2
    assert "shortcut_balance" not in at_random.manifest


def test_the_shortcut_aware_build_never_takes_a_candidate_the_rules_dropped(skewed_dataset):
    testset = testset_build(dataset_name="skewed", name="balanced", seed=1, balance=BalanceOptions(rounds=1))
    chosen = set(testset.items.values_list("candidates__candidate__text", flat=True))
    assert not any("ungrammatical" in text for text in chosen)
    assert testset.manifest["counts"]["questions"] == 200


def test_dropping_unbalanced_questions_leaves_out_exactly_those_counted(skewed_dataset):
    testset = testset_build(
        dataset_name="skewed", name="balanced", seed=1, balance=BalanceOptions(rounds=1, drop_unbalanced=True)
    )
    record = testset.manifest["shortcut_balance"]
    assert record["drop_unbalanced"] and record["unbalanced"] > 0
    assert testset.manifest["counts"]["questions"] == 200 - record["unbalanced"]


def test_negative_rounds_are_refused(skewed_dataset):
    with pytest.raises(UserError, match="--shortcut-rounds"):
        testset_build(dataset_name="skewed", name="bad", balance=BalanceOptions(rounds=-1))


def test_the_card_and_the_test_set_page_say_how_many_questions_could_not_be_balanced(
    skewed_dataset, admin_client, tmp_path
):
    from huggingface_hub import DatasetCard

    testset = testset_build(dataset_name="skewed", name="balanced", seed=1, balance=BalanceOptions(rounds=1))
    unbalanced = testset.manifest["shortcut_balance"]["unbalanced"]
    sentence = f"{unbalanced} of 200 questions could not be balanced (kept)"
    call_command("export_testset", "balanced", "--format", "hf", "--out", str(tmp_path / "hf"), stdout=StringIO())
    assert sentence in DatasetCard.load(tmp_path / "hf" / "README.md").text
    page = admin_client.get(f"/admin/testsets/testset/{testset.pk}/change/").content.decode()
    assert sentence in page


def test_derived_questions_are_chosen_for_too_from_the_candidates_the_original_left(db):
    dataset = scored_dataset("derived", skewed_length_pools(n=60), acceptable=True)
    testset = testset_build(dataset_name="derived", name="balanced", seed=2, balance=BalanceOptions(rounds=1))
    record = testset.manifest["shortcut_balance"]
    derived_items = testset.items.filter(question__derived_from__isnull=False)
    assert record["derived_questions"] == derived_items.count() == 60
    for item in derived_items.select_related("question"):
        false = set(item.candidates.filter(is_ground_truth=False).values_list("candidate_id", flat=True))
        original = testset.items.get(question=item.question.derived_from)
        taken = set(original.candidates.filter(is_ground_truth=False).values_list("candidate_id", flat=True))
        assert len(false) == 3 and false.isdisjoint(taken)
        assert not any(
            "ungrammatical" in t or "acceptable" in t
            for t in item.candidates.filter(is_ground_truth=False).values_list("candidate__text", flat=True)
        )
    assert dataset.questions.filter(derived_from__isnull=False).count() == 60
