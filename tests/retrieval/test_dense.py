import numpy as np
import pytest

from retrieval.dense.encoder import get_encoder
from retrieval.dense.search_index import APPROXIMATE, EXACT, DenseIndex, faiss_index_build
from retrieval.dense.store import EmbeddingStore, EmbeddingStoreWriter


def unit_vectors(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def write_store(folder, ids, vectors, dtype="float16", chunk=7) -> EmbeddingStore:
    writer = EmbeddingStoreWriter(folder, count=len(ids), dim=vectors.shape[1], dtype=dtype, model="test")
    for start in range(0, len(ids), chunk):
        writer.append(np.asarray(ids[start : start + chunk]), vectors[start : start + chunk])
    return writer.close()


@pytest.mark.parametrize(("dtype", "tolerance"), [("float16", 1e-3), ("int8", 1e-2)])
def test_store_gives_back_the_vectors_of_any_ids(tmp_path, dtype, tolerance):
    ids = np.arange(10, 60, 2)
    vectors = unit_vectors(len(ids))
    store = write_store(tmp_path / "s", ids, vectors, dtype=dtype)
    wanted = [58, 10, 999, 30]
    got = store.vectors_for(wanted)
    assert np.allclose(got[0], vectors[-1], atol=tolerance)
    assert np.allclose(got[1], vectors[0], atol=tolerance)
    assert not got[2].any()  # unknown id
    assert np.allclose(got[3], vectors[10], atol=tolerance)
    assert store.meta.dtype == dtype and (tmp_path / "s" / "vectors.bin").stat().st_size == len(ids) * 16 * (
        2 if dtype == "float16" else 1
    )


def test_store_ids_must_ascend(tmp_path):
    writer = EmbeddingStoreWriter(tmp_path / "s", count=4, dim=16, dtype="float16", model="test")
    writer.append(np.array([5, 6]), unit_vectors(2))
    with pytest.raises(ValueError, match="ascending"):
        writer.append(np.array([6, 7]), unit_vectors(2))


def test_store_must_be_filled_before_use(tmp_path):
    writer = EmbeddingStoreWriter(tmp_path / "s", count=4, dim=16, dtype="float16", model="test")
    writer.append(np.array([1, 2]), unit_vectors(2))
    with pytest.raises(ValueError, match="expected 4 rows, got 2"):
        writer.close()
    assert not EmbeddingStore.exists(tmp_path / "s")


@pytest.mark.parametrize("exact_max", [10_000, 10])
def test_faiss_search_matches_brute_force(tmp_path, exact_max):
    # given 500 stored vectors, an exact index (<= exact_max) or HNSW above it
    ids = np.arange(1000, 1500)
    vectors = unit_vectors(500, dim=32)
    store = write_store(tmp_path / "s", ids, vectors, chunk=128)
    kind = faiss_index_build(store, exact_max=exact_max, path=tmp_path / "faiss.index")
    assert kind == (EXACT if exact_max >= 500 else APPROXIMATE)
    index = DenseIndex(store, tmp_path / "faiss.index")
    queries = unit_vectors(20, dim=32, seed=1)
    # when searched
    scores, found = index.search(queries, k=10)
    # then the ids are the brute-force top 10 (all of them exactly, or nearly all with HNSW)
    expected = ids[np.argsort(-(queries @ vectors.T), axis=1)[:, :10]]
    recall = np.mean([len(set(f) & set(e)) / 10 for f, e in zip(found, expected, strict=True)])
    assert recall == 1.0 if kind == EXACT else recall >= 0.9
    assert np.all(np.diff(scores, axis=1) <= 1e-4)  # best first


def test_asking_for_more_hits_than_vectors_pads_with_minus_one(tmp_path):
    store = write_store(tmp_path / "s", np.arange(3), unit_vectors(3))
    faiss_index_build(store, exact_max=100, path=tmp_path / "faiss.index")
    _, found = DenseIndex(store, tmp_path / "faiss.index").search(unit_vectors(1), k=5)
    assert sorted(found[0][:3]) == [0, 1, 2] and list(found[0][3:]) == [-1, -1]


SENTENCES = [
    "The train to Leeds leaves at six.",
    "When does the train to Leeds depart?",
    "I love the smell of rain in the morning.",
    "Could you pass me the salt, please?",
    "Would you hand me the salt?",
    "My cat sleeps all day on the sofa.",
]


@pytest.mark.slow
def test_the_torch_encoders_own_batching_gives_sentence_transformers_embeddings(demo_texts):
    # given texts of very different lengths (one past the model's 256-token limit, one empty)
    texts = [*demo_texts, "", "word " * 400, "Yes."]
    encoder = get_encoder(backend="torch")
    # when our batching (sorted by length, small batches) and sentence-transformers' encode both run
    ours = encoder.encode(texts, batch_size=3)
    reference = encoder.model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    # then each text gets the same embedding, in the texts' order
    assert ours.shape == reference.shape
    assert np.abs(ours - reference).max() < 1e-5


@pytest.mark.slow
def test_int8_onnx_embeddings_agree_with_the_float_model(demo_texts):
    # given the packaged all-MiniLM-L6-v2, run by sentence-transformers in float32 and by the int8 ONNX export
    reference = get_encoder(backend="torch").encode(demo_texts)
    quantised = get_encoder(backend="onnx-int8").encode(demo_texts)
    # then the embeddings are nearly the same direction
    cosine = (reference * quantised).sum(axis=1)
    assert cosine.mean() >= 0.98 and cosine.min() >= 0.9
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["torch", "onnx-int8"])
def test_paraphrases_are_closer_than_unrelated_sentences(backend):
    v = get_encoder(backend=backend).encode(SENTENCES)
    similarity = v @ v.T
    assert similarity[0, 1] > similarity[0, 2] + 0.2  # two train questions vs train and rain
    assert similarity[3, 4] > similarity[3, 5] + 0.2


def test_encoders_are_loaded_once_per_process():
    assert get_encoder(backend="onnx-int8") is get_encoder(backend="onnx-int8")


def test_encoder_name_records_model_and_backend():
    assert get_encoder(backend="onnx-int8").name == "all-MiniLM-L6-v2@onnx-int8"


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown embedding backend 'gpu-magic'"):
        get_encoder(backend="gpu-magic")


def test_a_model_path_without_a_model_is_refused_not_downloaded(tmp_path):
    with pytest.raises(FileNotFoundError, match="never downloaded"):
        get_encoder(model_path=str(tmp_path), backend="torch")


@pytest.fixture
def demo_texts() -> list[str]:
    from retrieval.services.demo import DEMO_REPOSITORY_FILE

    return DEMO_REPOSITORY_FILE.read_text().splitlines()[:200]


def test_auto_backend_is_int8_onnx_on_a_cpu_and_torch_on_a_gpu(monkeypatch):
    from retrieval.dense import encoder as encoder_module

    monkeypatch.setattr(encoder_module, "cuda_available", lambda: False)
    assert get_encoder(backend="auto").backend == "onnx-int8"
    # with a GPU the float model runs there (this machine has none: only the choice is checked)
    chosen = []
    monkeypatch.setattr(encoder_module, "cuda_available", lambda: True)
    monkeypatch.setattr(encoder_module, "TorchEncoder", lambda path: chosen.append(path) or "torch-encoder")
    monkeypatch.setattr(encoder_module, "_cache", {})
    assert get_encoder(backend="auto") == "torch-encoder" and len(chosen) == 1


@pytest.mark.parametrize("exact_max", [10_000, 10], ids=["exact", "hnsw"])
def test_equal_scores_come_in_utterance_id_order(tmp_path, exact_max):
    # given 40 stored copies of one vector (ids 100..139) among 60 others
    same = unit_vectors(1, dim=32, seed=7)
    vectors = np.concatenate([unit_vectors(60, dim=32), np.repeat(same, 40, axis=0)])
    store = write_store(tmp_path / "s", np.arange(40, 140), vectors, chunk=16)
    faiss_index_build(store, exact_max=exact_max, path=tmp_path / "faiss.index")
    # when that vector is searched for its top 3 (the tie runs past k and past the margin)
    scores, found = DenseIndex(store, tmp_path / "faiss.index").search(same, k=3)
    # then the lowest ids of the tie come first, in id order
    assert list(found[0]) == [100, 101, 102] and len(set(scores[0].tolist())) == 1
