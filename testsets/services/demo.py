"""The demo's annotated dataset (a released test set in Sato et al.'s format, testsets/demo/) and a
test set built from it: a demo step (annotation.services.demo), registered in apps.py."""

from pathlib import Path

from django.db import transaction

from annotation.models import Dataset
from core.readable import count
from testsets.models import TestSet
from testsets.shortcuts.balance import BalanceOptions

from .build import testset_build
from .import_tsv import testset_import

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"
DEMO_ANNOTATED = "demo-annotated"
DEMO_TESTSET = "demo-annotated-v1"


def demo_annotated_testset(with_pools: bool) -> list[str]:
    """Import the annotated demo dataset and build its test set, each unless present already."""
    done = []
    with transaction.atomic():
        if not Dataset.objects.filter(name=DEMO_ANNOTATED).exists():
            report = testset_import(
                tsv_path=DEMO_DIR / "testset.tsv",
                scores_path=DEMO_DIR / "human_scores.jsonl",
                dataset_name=DEMO_ANNOTATED,
            )
            done.append(f"dataset {DEMO_ANNOTATED}: {report['questions']} questions, {count(report['scores'])} scores")
        if not TestSet.objects.filter(name=DEMO_TESTSET).exists():
            # Shortcut-aware, like a release should be built: the demo's false candidates are of
            # every length, and the choice spreads the ground truth's place among them (docs/annotation.md).
            testset = testset_build(dataset_name=DEMO_ANNOTATED, name=DEMO_TESTSET, seed=0, balance=BalanceOptions())
            counts = testset.manifest["counts"]
            done.append(
                f"test set {DEMO_TESTSET}: {counts['questions']} questions ({counts['derived_questions']} derived)"
            )
    return done
