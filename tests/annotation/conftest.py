"""Fixtures shared by the annotation tests."""

import pytest

from annotation.models import Dataset
from annotation.services.testset_import import testset_import


@pytest.fixture
def sato_dataset(db, shared_data, tmp_path):
    """Sato et al.'s released human scores, imported with a TSV of placeholder texts."""
    scores_path = shared_data / "human_annotated" / "eval-via-selection" / "human_scores.jsonl"
    n = sum(1 for _ in scores_path.open())
    tsv = tmp_path / "sato.tsv"
    tsv.write_text(
        "".join(
            "\t".join(
                [f"context {i} turn {t}" for t in range(3)]
                + [f"ground truth {i}"]
                + [f"false candidate {i}.{j}" for j in range(3)]
            )
            + "\n"
            for i in range(n)
        )
    )
    testset_import(tsv_path=tsv, scores_path=scores_path, dataset_name="sato")
    return Dataset.objects.get(name="sato"), scores_path
