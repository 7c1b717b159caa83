"""With match_surface the pool takes the hits like the ground truth in length and style first, each
group in rank order, and records the hits it passed over for that."""

import numpy as np

from core.text import text_hash
from retrieval.models import ExclusionReason
from retrieval.services.pool_choice import PoolSettings, pool_choose, surface_like

GROUND_TRUTH = "I'm not sure, but I think the train leaves at nine."
HITS = [
    "Nine.",  # too short
    "The train leaves at nine, I'm quite sure of it.",  # like it
    "I 'm sure the train leaves at nine , not at ten .",  # tokenised
    "Maybe the train leaves at nine, maybe at ten today.",  # like it
    "Trains.",  # too short
]


def choose(*, match_surface: bool):
    utterances = {i: (i, t, text_hash(t), 9) for i, t in enumerate(HITS, start=1)}
    rng = np.random.default_rng(0)
    vectors = {i: v / np.linalg.norm(v) for i, v in ((i, rng.normal(size=16)) for i in utterances)}
    query = np.zeros(16)
    return pool_choose(
        {"lexical": [(i, 10.0 - i, i) for i in utterances], "dense": []},
        utterances=utterances,
        vectors=vectors,
        query=query,
        blocked=set(),
        excluded=set(),
        settings=PoolSettings(lexical=2, dense=0, paraphrase_threshold=2.0, match_surface=match_surface),
        versions={"lexical": "bm25-v1", "dense": "minilm-v1"},
        ground_truth=GROUND_TRUTH,
    )


def test_like_means_length_within_the_factor_and_the_same_tokenisation():
    assert [surface_like(text, GROUND_TRUTH) for text in HITS] == [False, True, False, True, False]


def test_without_matching_the_pool_takes_the_hits_in_rank_order():
    pool, exclusions = choose(match_surface=False)
    assert [c.utterance[1] for c in pool] == HITS[:2] and exclusions == []


def test_with_matching_the_pool_takes_the_hits_like_the_ground_truth_and_records_those_passed_over():
    pool, exclusions = choose(match_surface=True)
    assert [c.utterance[1] for c in pool] == [HITS[1], HITS[3]]
    assert [(e["rank"], e["reason"]) for e in exclusions] == [
        (1, ExclusionReason.SURFACE_MISMATCH),
        (3, ExclusionReason.SURFACE_MISMATCH),
    ]


def test_the_pool_job_passes_match_surface_to_the_choice():
    from retrieval.job_params import BuildPoolsParams
    from retrieval.services.job_handlers import _pool_settings

    params = BuildPoolsParams(dataset="d", repository="r", match_surface=True)
    assert _pool_settings(params).match_surface and not PoolSettings().match_surface
