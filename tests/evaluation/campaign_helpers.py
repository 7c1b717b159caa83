"""Builders for the campaign tests: a small test set, a repository, rated generations."""

import json

from annotation.models import Candidate
from evaluation.models import Campaign, GeneratedResponse, Generation, ResponseRating
from tests.factories import DatasetFactory, RepositoryFactory, UtteranceFactory
from testsets.services.build import testset_build

# Human ratings (1-5, two raters) of the three systems of the campaign job and command tests.
HUMAN_RATINGS = {"tiny": (4, 5), "shortest": (2, 3), "longest": (1, 1)}

GOOD_GT = [5, 5, 4, 5, 5]
WRONG = [1, 1, 2, 1, 1]


def build_testset(scored_question, *, questions: int = 6, name: str = "r1", dataset: str = "camp"):
    """A test set of ``questions`` questions (ground truth + 3 false candidates); in the first half one
    false candidate is "dense" and labelled off-topic by the annotators."""
    dataset = DatasetFactory(name=dataset)
    for n in range(questions):
        question = scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 3)
        if n < questions // 2:
            false = question.candidates.filter(is_ground_truth=False).first()
            Candidate.objects.filter(pk=false.pk).update(source="dense", text=f"dense {false.text}")
            false.scores.update(labels=["off-topic"])
    return testset_build(dataset_name=dataset.name, name=name, seed=0)


def build_repository(name: str = "films", size: int = 40):
    """Utterances of every length from 3 to about 120 characters: some shorter than the ground truths
    (about 36 characters), most longer, so length-based systems get trial-to-trial variation."""
    repository = RepositoryFactory(name=name)
    for i in range(size):
        UtteranceFactory(repository=repository, text=" ".join(["la"] * (i + 1)) + f" {i}")
    return repository


def rated_generation(system, ratings, *, dataset=None, source_file: str = "", keys=None):
    """A generation of ``system`` with one response per entry of ``ratings`` (each a tuple of 1-5
    ratings, annotator keys "0", "1", ...)."""
    generation = Generation.objects.create(
        system=system, dataset=dataset, source_file=source_file or ("" if dataset else f"{system.name}.json")
    )
    keys = keys or [f"q{i}" for i in range(len(ratings))]
    for key, values in zip(keys, ratings, strict=True):
        response = GeneratedResponse.objects.create(
            generation=generation,
            context_key=key,
            context=["hello .", "hi ."],
            references=["fine , thanks ."],
            text=f"fine {system.name} {key} .",
        )
        ResponseRating.objects.bulk_create(
            ResponseRating(response=response, annotator_key=str(i), value=v) for i, v in enumerate(values)
        )
    return generation


def campaign_with(name: str = "camp", *, systems=(), generations=(), **fields) -> Campaign:
    campaign = Campaign.objects.create(name=name, **fields)
    campaign.systems.add(*systems)
    campaign.generations.add(*generations)
    return campaign


def zhao_item(i: int, model: str, appropriateness=(5, 4, 4, 3), **overrides) -> dict:
    item = {
        "dialogue_id": f"dailydialog-zhao_{i:05d}",
        "model": model,
        "context": "hello .\nhi , how are you ?\nfine .",
        "response": f"good to hear , {i} .",
        "reference": ["glad to hear it ."],
        "annotations": {"appropriateness": list(appropriateness), "grammar": [5, 5, 4, 5]},
    }
    item.update(overrides)
    return item


def write_zhao(write_file, items, name: str = "zhao.json"):
    return write_file(name, json.dumps(items, indent=2))
