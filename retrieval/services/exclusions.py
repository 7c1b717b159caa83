"""Texts that must never enter a repository or a candidate pool."""

from annotation.models import Candidate, Dataset, Turn
from core.errors import UserError


def excluded_hashes(dataset_names: list[str]) -> set[str]:
    """Normalised-text hashes of every context turn and ground truth of the given datasets (the
    paper keeps evaluation and training data out of the repository and the pools)."""
    if not dataset_names:
        return set()
    found = set(Dataset.objects.filter(name__in=dataset_names).values_list("name", flat=True))
    missing = sorted(set(dataset_names) - found)
    if missing:
        raise UserError(f"excluded dataset: no dataset named {', '.join(missing)}")
    hashes = set(Turn.objects.filter(context__dataset__name__in=dataset_names).values_list("text_hash", flat=True))
    hashes.update(
        Candidate.objects.filter(question__dataset__name__in=dataset_names, is_ground_truth=True).values_list(
            "text_hash", flat=True
        )
    )
    return hashes
