"""The exact tier's GEMM search: the exact top k, and the same bits for a query whatever shares
its batch, the batch size and the number of BLAS threads (pools must not depend on how a job is
split into shards and batches)."""

import numpy as np
import pytest

from retrieval.dense import exact_gemm
from retrieval.dense.exact_gemm import exact_top

from .test_dense import unit_vectors, write_store


@pytest.fixture
def store(tmp_path, monkeypatch):
    # Small blocks and groups, so that a small store has several blocks (the last one short)
    # and a batch of 200 several groups (the last one padded).
    monkeypatch.setattr(exact_gemm, "BLOCK", 96)
    monkeypatch.setattr(exact_gemm, "GROUP", 8)
    return write_store(tmp_path / "s", np.arange(1000) * 3, unit_vectors(1000, dim=32, seed=1), chunk=250)


@pytest.fixture
def full_size_store(tmp_path):
    """The real group and block sizes (a short last block) and 384 dimensions: the shapes BLAS
    splits between threads."""
    count = exact_gemm.BLOCK + 3000
    return write_store(tmp_path / "big", np.arange(count), unit_vectors(count, dim=384, seed=5), chunk=4096)


@pytest.fixture(params=["small", "full size"])
def any_store(request):
    return request.getfixturevalue("store" if request.param == "small" else "full_size_store")


def test_gives_the_exact_top_k_best_first(store):
    queries = unit_vectors(20, dim=32, seed=2)
    scores, rows = exact_top(store, queries, 50)
    full = queries @ store.between(0, store.meta.count).T
    expected = np.argsort(-full, axis=1, kind="stable")[:, :50]
    assert (rows == expected).all()
    assert np.allclose(scores, np.take_along_axis(full, expected, axis=1), atol=1e-6)


def test_fewer_rows_than_asked_are_padded(store):
    scores, rows = exact_top(store, unit_vectors(3, dim=32, seed=2), 1200)
    assert (rows[:, :1000] >= 0).all() and (rows[:, 1000:] == -1).all() and np.isneginf(scores[:, 1000:]).all()
    assert sorted(rows[0, :1000]) == list(range(1000))


def test_a_query_gets_the_same_bits_alone_and_in_batches_of_3_and_200(any_store):
    store = any_store
    batch = unit_vectors(200, dim=store.meta.dim, seed=3)
    for position in (0, 1, 117, 199):
        alone = exact_top(store, batch[position : position + 1], 50)
        small = exact_top(store, np.stack([batch[5], batch[position], batch[9]]), 50)
        whole = exact_top(store, batch, 50)
        for (scores, rows), at in ((small, 1), (whole, position)):
            assert scores[at].tobytes() == alone[0][0].tobytes()
            assert (rows[at] == alone[1][0]).all()


def test_a_query_gets_the_same_bits_with_one_and_two_blas_threads(any_store):
    store = any_store
    threadpoolctl = pytest.importorskip(
        "threadpoolctl", reason="threadpoolctl is not installed: BLAS threads not varied"
    )
    batch = unit_vectors(200, dim=store.meta.dim, seed=4)
    results = []
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(limits=threads, user_api="blas"):
            results.append(exact_top(store, batch, 50))
    assert results[0][0].tobytes() == results[1][0].tobytes()
    assert (results[0][1] == results[1][1]).all()
