"""The retrieval part of the demo (`make run`): the demo repository and candidate pools for the
demo dialogues, opened for annotation. A step of annotation's demo loader, registered in apps.py."""

from pathlib import Path

from django.db import transaction

from annotation.models import Candidate, Dataset, Repository
from annotation.services.assignment import annotation_open
from annotation.services.demo import DEMO_DATASET

from .pool_choice import PoolSettings
from .pools import pools_build
from .repository_import import repository_import

DEMO_REPOSITORY = "demo-subtitles"
DEMO_REPOSITORY_FILE = Path(__file__).resolve().parent.parent / "demo" / "repository.txt"


def demo_repository_and_pools(with_pools: bool) -> list[str]:
    done = []
    with transaction.atomic():
        if not Repository.objects.filter(name=DEMO_REPOSITORY).exists():
            report = repository_import(path=DEMO_REPOSITORY_FILE, name=DEMO_REPOSITORY, exclude_datasets=[DEMO_DATASET])
            done.append(f"repository {DEMO_REPOSITORY}: {report['repository_size']} utterances")
    if (
        with_pools
        and not Candidate.objects.filter(question__dataset__name=DEMO_DATASET, is_ground_truth=False).exists()
    ):
        # Builds the demo's search indexes too (the first run exports the embedding model).
        # match_surface: hits of the ground truth's length first, so that the pools' audit does not
        # find the ground truth by its length (the repository has lines of every length).
        report = pools_build(
            dataset_name=DEMO_DATASET,
            repository_name=DEMO_REPOSITORY,
            settings=PoolSettings(match_surface=True),
            exclude_datasets=[DEMO_DATASET],
        )
        done.append(f"candidate pools for {DEMO_DATASET}: {report['candidates_added']} candidates")
        units = annotation_open(dataset=Dataset.objects.get(name=DEMO_DATASET))
        done.append(f"{DEMO_DATASET} open for annotation: {units} units")
    return done
