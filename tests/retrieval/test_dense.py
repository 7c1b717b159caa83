import json

import faiss
import numpy as np
import pytest

from retrieval.dense.encoder import get_encoder
from retrieval.dense.search_index import FaissOptions, IvfPqIndex, faiss_index_build, faiss_index_open
from retrieval.dense.store import EmbeddingStore, EmbeddingStoreWriter

pytestmark = pytest.mark.heavy


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


# -- the FAISS tiers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exact_max", "hnsw_max", "tier", "factory"),
    [(500, 1000, "exact", "GEMM"), (499, 500, "hnsw", "HNSW32,SQfp16"), (10, 499, "ivfpq", "IVF8,PQ16x3")],
)
def test_the_tier_is_chosen_by_the_size_thresholds(tmp_path, exact_max, hnsw_max, tier, factory):
    # given a store of 500 vectors
    store = write_store(tmp_path / "s", np.arange(500), unit_vectors(500), chunk=100)
    # when its index is built under the thresholds
    meta = faiss_index_build(store, folder=tmp_path, options=FaissOptions(exact_max=exact_max, hnsw_max=hnsw_max))
    # then the tier (and its layout) is recorded beside the index, and the index opens as that tier
    assert (meta["tier"], meta["factory"]) == (tier, factory)
    assert json.loads((tmp_path / "faiss.json").read_text())["tier"] == tier
    assert faiss_index_open(store, tmp_path).tier == tier


def test_an_exact_index_built_by_faiss_before_opens_and_searches_the_store(tmp_path):
    # given an exact folder as FAISS SQfp16 built it (its faiss.index, and none at all recorded)
    vectors = unit_vectors(300)
    store = write_store(tmp_path / "s", np.arange(300) * 2, vectors, chunk=100)
    old = faiss.index_factory(16, "SQfp16", faiss.METRIC_INNER_PRODUCT)
    old.train(np.zeros((1, 16), dtype=np.float32))
    old.add(vectors)
    faiss.write_index(old, str(tmp_path / "faiss.index"))
    # when it is opened, then it is the exact tier, and finds each stored vector first
    index = faiss_index_open(store, tmp_path)
    _, found = index.search(vectors[[0, 7, 299]], k=3)
    assert index.tier == "exact" and list(found[:, 0]) == [0, 14, 598]


def test_ivfpq_keeps_its_inverted_lists_on_disk_memory_mapped(tmp_path):
    # given an IVF-PQ index of 2,000 vectors
    store = write_store(tmp_path / "s", np.arange(2000), unit_vectors(2000, dim=32), chunk=500)
    meta = faiss_index_build(store, folder=tmp_path, tier="ivfpq", options=FaissOptions(pq_bytes=16))
    # then the codes (16 subquantizers of 5 bits on so small a store) and an 8-byte row per vector are
    # in the lists file, not in the index file
    assert (meta["m"], meta["nbits"]) == (16, 5)
    assert (tmp_path / "faiss.ivfdata").stat().st_size >= 2000 * (16 * 5 // 8 + 8)
    assert (tmp_path / "faiss.index").stat().st_size < 2000 * 10
    assert not (tmp_path / "faiss-blocks").exists()  # the build's blocks are gone
    # and the opened index reads them through a memory map, with the configured nprobe
    index = faiss_index_open(store, tmp_path, FaissOptions(nprobe=5))
    ivf = faiss.extract_index_ivf(index.index)
    assert isinstance(faiss.downcast_InvertedLists(ivf.invlists), faiss.OnDiskInvertedLists)
    assert ivf.nprobe == 5 and meta["nlist"] == ivf.nlist


def test_ivfpq_index_still_opens_when_its_folder_moves(tmp_path):
    # given an IVF-PQ index whose data directory was moved after the build
    store = write_store(tmp_path / "s", np.arange(300), unit_vectors(300))
    (tmp_path / "a").mkdir()
    faiss_index_build(store, folder=tmp_path / "a", tier="ivfpq")
    (tmp_path / "a").rename(tmp_path / "b")
    # then it finds its lists beside it
    _, found = faiss_index_open(store, tmp_path / "b").search(unit_vectors(1), k=3)
    assert (found >= 0).all()


def test_ivfpq_without_reranking_keeps_pq_scores_and_with_it_gives_exact_cosines(tmp_path):
    # given an IVF-PQ index over a store
    vectors = unit_vectors(1000, dim=32)
    store = write_store(tmp_path / "s", np.arange(1000), vectors, chunk=250)
    faiss_index_build(store, folder=tmp_path, tier="ivfpq", options=FaissOptions(pq_bytes=8))
    query = unit_vectors(1, dim=32, seed=3)
    # when searched with re-ranking off and on
    pq_scores, pq_found = faiss_index_open(store, tmp_path, FaissOptions(rerank=0, nprobe=64)).search(query, k=5)
    scores, found = faiss_index_open(store, tmp_path, FaissOptions(rerank=8, nprobe=64)).search(query, k=5)
    # then re-ranked scores are the stored vectors' cosines, and PQ scores only approximate them
    assert np.allclose(scores[0], vectors[found[0]] @ query[0], atol=2e-3)
    assert not np.allclose(pq_scores[0], vectors[pq_found[0]] @ query[0], atol=2e-3)


def test_reranking_reads_an_int8_store(tmp_path):
    vectors = unit_vectors(400, dim=32)
    store = write_store(tmp_path / "s", np.arange(400), vectors, dtype="int8", chunk=100)
    faiss_index_build(store, folder=tmp_path, tier="ivfpq")
    scores, found = faiss_index_open(store, tmp_path).search(vectors[:3], k=1)
    assert list(found[:, 0]) == [0, 1, 2] and np.allclose(scores[:, 0], 1.0, atol=2e-2)


@pytest.mark.parametrize(
    ("count", "factory", "train"),
    [
        (108_084, "OPQ48,IVF1024,PQ48", 65_536),
        (100_000_000, "OPQ48,IVF32768_HNSW32,PQ48", 2_097_152),
        (441_000_000, "OPQ48,IVF65536_HNSW32,PQ48", 4_194_304),
    ],
)
def test_ivfpq_layout_grows_with_the_store(count, factory, train):
    layout = IvfPqIndex.layout(count, 384, 48)
    assert (layout["factory"], layout["train"], layout["nbits"]) == (factory, train, 8)


def test_an_index_built_before_the_tiers_were_recorded_opens_by_its_type(tmp_path):
    # given an HNSW index file without faiss.json, as versions built before the tiers
    store = write_store(tmp_path / "s", np.arange(50), unit_vectors(50))
    faiss_index_build(store, folder=tmp_path, tier="hnsw")
    (tmp_path / "faiss.json").unlink()
    # when it is opened, then it searches as HNSW
    index = faiss_index_open(store, tmp_path)
    assert index.tier == "hnsw" and index.search(unit_vectors(1), k=1)[1][0, 0] >= 0
