"""The demo's annotated test set: its texts and its build do not give the ground truth away by length
or by surface features."""

import pytest

from annotation.services.demo import demo_load
from testsets.models import TestSet
from testsets.services.demo import DEMO_TESTSET


@pytest.fixture
def demo_manifest(db):
    demo_load(with_pools=False, with_models=False)
    return TestSet.objects.get(name=DEMO_TESTSET).manifest


def test_the_demo_test_set_is_built_shortcut_aware(demo_manifest):
    assert demo_manifest["shortcut_balance"]["method"] == "place-balanced"


@pytest.mark.parametrize("baseline", ["longest", "shortest"])
def test_length_does_not_point_at_the_demo_ground_truth(demo_manifest, baseline):
    audit = demo_manifest["shortcut_audit"]
    found = next(b for b in audit["baselines"] if b["name"] == baseline)
    low, high = found["ci95"]
    assert low <= audit["chance"] <= high


def test_no_shortcut_baseline_finds_the_demo_ground_truth_above_chance(demo_manifest):
    # The false candidates are punctuated like the ground truths (commas, contractions, second
    # sentences), so the surface classifier is no better than chance either.
    assert demo_manifest["shortcut_audit"]["above_chance"] == []
