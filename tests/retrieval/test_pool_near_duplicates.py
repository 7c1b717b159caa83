"""Candidates that mean the same as one already in the pool are left out like paraphrases of the
ground truth, and the pool page says why a retriever has fewer candidates than its share."""

import numpy as np
import pytest
from django.urls import reverse

from core.models import Job
from core.text import text_hash
from retrieval.models import ExclusionReason, PoolStatus, QuestionRetrieval
from retrieval.services.pool_choice import PoolSettings, pool_choose
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory, RepositoryFactory, UtteranceFactory

PIZZA = "OK darling , I got some pizzas for dinner ."
PIZZA_AGAIN = "OK darling , got some pizzas for dinner ."
TRAIN = "The train leaves at nine ."


def unit(*values) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def choose(threshold: float):
    texts = {1: PIZZA, 2: PIZZA_AGAIN, 3: TRAIN}
    utterances = {i: (i, t, text_hash(t), 9) for i, t in texts.items()}
    vectors = {1: unit(1, 0, 0), 2: unit(1, 0.05, 0), 3: unit(0, 1, 0)}  # 1 and 2: cosine 0.9988
    return pool_choose(
        {"lexical": [(1, 9.0, 1), (2, 8.0, 2), (3, 7.0, 3)], "dense": []},
        utterances=utterances,
        vectors=vectors,
        query=unit(0, 0, 1),  # far from all three: no paraphrase of the ground truth
        blocked=set(),
        excluded=set(),
        settings=PoolSettings(lexical=2, dense=0, paraphrase_threshold=threshold),
        versions={"lexical": "bm25-v1", "dense": "minilm-v1"},
    )


def test_a_near_duplicate_of_a_chosen_candidate_is_left_out_and_the_next_hit_taken():
    pool, exclusions = choose(0.95)
    assert [c.utterance[1] for c in pool] == [PIZZA, TRAIN]
    [left_out] = exclusions
    assert (left_out["rank"], left_out["reason"], left_out["of"]) == (2, ExclusionReason.NEAR_DUPLICATE, PIZZA)
    assert left_out["similarity"] == pytest.approx(0.9988, abs=1e-4)


def test_above_the_threshold_both_are_candidates():
    pool, exclusions = choose(1.01)
    assert [c.utterance[1] for c in pool] == [PIZZA, PIZZA_AGAIN] and exclusions == []


@pytest.mark.django_db
def test_the_pool_page_says_why_a_retriever_has_fewer_candidates_than_its_share(admin_client):
    repository = RepositoryFactory(name="films")
    question = QuestionFactory(dataset=DatasetFactory(name="pizza"), ground_truth="Dinner is ready.")
    utterance = UtteranceFactory(repository=repository, text=PIZZA)
    CandidateFactory(
        question=question,
        utterance=utterance,
        text=PIZZA,
        source="dense",
        rank=1,
        retrieval=[{"retriever": "dense", "score": 0.8, "rank": 1, "version": "v1"}],
    )
    job = Job.objects.create(
        kind="build_pools", params={"dataset": "pizza", "repository": "films", "lexical": 0, "dense": 2}
    )
    near = {"retriever": "dense", "rank": 2, "score": 0.79, "utterance_id": 9, "text": PIZZA_AGAIN}
    QuestionRetrieval.objects.create(
        question=question,
        repository=repository,
        status=PoolStatus.DONE,
        pool_size=1,
        job=job,
        exclusions=[{**near, "reason": ExclusionReason.NEAR_DUPLICATE, "similarity": 0.981, "of": PIZZA}],
    )
    html = admin_client.get(reverse("pool-review", args=["pizza"]), {"q": question.pk}).content.decode()
    share = html.split(f'id="share-{repository.pk}-dense">')[1].split("</p>")[0]
    assert share == "1 of its 2 places: hits left out: 1 near-duplicate of a candidate already in the pool."
    assert "near-duplicate of a candidate already in the pool (cosine 0.981 to “OK darling" in html
