"""One behaviour suite for every dense search backend: the FAISS tiers (exact, HNSW, IVF-PQ, each
chosen by its size thresholds), Elasticsearch kNN through the real client against the local test
double always, and a real cluster when ELASTICSEARCH_URL is set (e.g. `docker compose up
elasticsearch` and ELASTICSEARCH_URL=http://localhost:9200)."""

import os
import uuid

import numpy as np
import pytest

from retrieval.dense.backends import dense_backend
from retrieval.dense.base import DenseIndex
from retrieval.dense.store import EmbeddingStoreWriter
from tests.retrieval.es_double import ElasticsearchDouble

pytestmark = pytest.mark.heavy

BACKENDS = ["exact", "hnsw", "ivfpq", "elasticsearch-double", "elasticsearch"]
# The size thresholds that make each FAISS tier the one chosen for a small store.
THRESHOLDS = {"exact": (10**9, 10**9), "hnsw": (0, 10**9), "ivfpq": (0, 0)}


def unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def clustered(n: int, dim: int = 32, clusters: int = 40, seed: int = 0) -> np.ndarray:
    """Unit vectors around a few directions, as sentence embeddings are (topics), not uniform noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim))
    return unit(centres[rng.integers(0, clusters, n)] + 0.6 * rng.normal(size=(n, dim)))


@pytest.fixture(params=BACKENDS)
def make_index(request, tmp_path, settings):
    """A factory: (utterance ids, vectors) -> a built and opened DenseIndex of this backend."""
    double = None
    if request.param.startswith("elasticsearch"):
        if request.param == "elasticsearch":
            if not os.environ.get("ELASTICSEARCH_URL"):
                pytest.skip("ELASTICSEARCH_URL is not set: no real Elasticsearch cluster to test against")
            settings.ELASTICSEARCH_URL = os.environ["ELASTICSEARCH_URL"]
        else:
            double = ElasticsearchDouble().__enter__()
            settings.ELASTICSEARCH_URL = double.url
        settings.WELLCHOSEN_DENSE_SEARCH = "elasticsearch"
    else:
        settings.WELLCHOSEN_DENSE_SEARCH = "faiss"
        settings.WELLCHOSEN_FAISS_EXACT_MAX, settings.WELLCHOSEN_FAISS_HNSW_MAX = THRESHOLDS[request.param]
    made: list[tuple] = []

    def make(ids, vectors, *, chunk: int = 500) -> DenseIndex:
        ids, vectors = np.asarray(ids, dtype=np.int64), unit(vectors)
        folder = tmp_path / f"test-{uuid.uuid4().hex[:8]}-v1"
        backend = dense_backend()
        writer = EmbeddingStoreWriter(
            folder / "store", count=len(ids), dim=vectors.shape[1], dtype="float16", model="t"
        )
        build = backend(folder=folder, dim=vectors.shape[1], count=len(ids))
        for start in range(0, len(ids), chunk):  # as the encoding step hands over its chunks
            writer.append(ids[start : start + chunk], vectors[start : start + chunk])
            build.add(ids[start : start + chunk], vectors[start : start + chunk])
        params = build.finish(writer.close())
        made.append((backend, folder, params))
        return backend.open(folder=folder, params=params)

    yield make
    for backend, folder, params in made:
        backend.delete(folder=folder, params=params)
    if double is not None:
        double.__exit__(None, None, None)
        assert not double.errors, f"the Elasticsearch double refused requests: {double.errors}"


def brute_force(ids: np.ndarray, vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    scores = unit(queries) @ unit(vectors).T
    return np.asarray(ids)[np.lexsort((np.broadcast_to(ids, scores.shape), -scores))[:, :k]]


def test_hits_come_best_first_with_the_cosine_of_the_stored_vector(make_index):
    # given 300 clustered vectors
    ids, vectors = np.arange(1000, 1300), clustered(300)
    index = make_index(ids, vectors)
    queries = clustered(12, seed=1)
    # when 12 queries ask for their top 10
    scores, found = index.search(queries, k=10)
    # then every query has 10 distinct hits, best first, each scored by its cosine with the query
    assert found.shape == scores.shape == (12, 10) and all(len(set(row)) == 10 for row in found)
    assert np.all(np.diff(scores, axis=1) <= 1e-6)
    stored = index.vectors_for(found.ravel()).reshape(12, 10, -1)
    assert np.allclose(scores, np.einsum("qkd,qd->qk", stored, unit(queries)), atol=2e-3)


def test_the_top_hits_are_the_exact_ones_on_a_small_index(make_index):
    # given 300 vectors: few enough that every backend looks at all of them
    ids, vectors = np.arange(1000, 1300), clustered(300)
    queries = clustered(12, seed=1)
    # when searched
    _, found = make_index(ids, vectors).search(queries, k=5)
    # then the hits are the brute-force top 5
    assert (found == brute_force(ids, vectors, queries, 5)).mean() >= 0.95


def test_equal_scores_come_in_utterance_id_order_even_past_the_first_answer(make_index):
    # given 40 stored copies of one vector (ids 100..139) among 60 others
    same = clustered(1, seed=7)
    vectors = np.concatenate([clustered(60, seed=3), np.repeat(same, 40, axis=0)])
    index = make_index(np.arange(40, 140), vectors, chunk=16)
    # when that vector asks for its top 3 (the tie runs past k and past the candidates first fetched)
    scores, found = index.search(same, k=3)
    # then the lowest ids of the tie come first, in id order
    assert list(found[0]) == [100, 101, 102] and len(set(scores[0].tolist())) == 1


def test_asking_for_more_hits_than_vectors_pads_with_minus_one(make_index):
    index = make_index([7, 8, 9], clustered(3))
    scores, found = index.search(clustered(2, seed=1), k=5)
    assert [sorted(row[:3]) for row in found.tolist()] == [[7, 8, 9], [7, 8, 9]]
    assert (found[:, 3:] == -1).all() and np.isneginf(scores[:, 3:]).all() and np.isfinite(scores[:, :3]).all()


def test_no_queries_and_no_hits_asked_give_empty_answers(make_index):
    index = make_index(np.arange(50), clustered(50))
    scores, found = index.search(np.zeros((0, 32), dtype=np.float32), k=5)
    assert scores.shape == found.shape == (0, 5)
    scores, found = index.search(clustered(3), k=0)
    assert scores.shape == found.shape == (3, 0)


def test_the_same_index_and_an_index_built_again_answer_the_same(make_index):
    # given one store's vectors built into two indexes
    ids, vectors = np.arange(5000, 5600), clustered(600)
    first, second = make_index(ids, vectors), make_index(ids, vectors)
    queries = clustered(64, seed=2)
    # when the same queries are asked twice of one, in other batches, and once of the other
    scores, found = first.search(queries, k=20)
    again = first.search(queries[::-1], k=20)
    rebuilt = second.search(queries, k=20)
    # then the answers are identical
    assert np.array_equal(found, again[1][::-1]) and np.array_equal(scores, again[0][::-1])
    assert np.array_equal(found, rebuilt[1]) and np.array_equal(scores, rebuilt[0])


def test_recall_at_10_against_exact_search_on_clustered_vectors(make_index):
    # given 3,000 clustered vectors: enough for IVF-PQ to leave most lists unscanned
    ids, vectors = np.arange(3000), clustered(3000, clusters=60, seed=4)
    queries = unit(vectors[::150] + 0.4 * clustered(20, clusters=60, seed=5))
    # when searched for 10 hits
    _, found = make_index(ids, vectors).search(queries, k=10)
    # then nearly all of the exact top 10 are found
    truth = brute_force(ids, vectors, queries, 10)
    assert np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth, strict=True)]) >= 0.9


@pytest.mark.slow
def test_recall_at_10_against_exact_search_on_sentence_embeddings(make_index):
    # given the demo repository's 605 utterances encoded by the packaged MiniLM
    from retrieval.dense.encoder import get_encoder
    from retrieval.services.demo import DEMO_REPOSITORY_FILE

    texts = [t for t in DEMO_REPOSITORY_FILE.read_text().splitlines() if t.strip()]
    vectors = get_encoder(backend="onnx-int8").encode(texts)
    ids = np.arange(1, len(texts) + 1)
    # when each of 40 of them, rephrased by the encoder's noise-free vector, asks for its top 10
    queries = vectors[:: max(1, len(texts) // 40)][:40]
    _, found = make_index(ids, vectors).search(queries, k=10)
    # then the exact top 10 are found
    truth = brute_force(ids, vectors, queries, 10)
    assert np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth, strict=True)]) >= 0.9
