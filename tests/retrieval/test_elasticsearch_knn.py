"""Dense search on Elasticsearch (kNN) through the real ``elasticsearch`` client against the local
test double: the mapping, the bulk load by the encoding step, batched ``_msearch`` kNN queries,
errors, and the embedding build that feeds it. The behaviour shared with the FAISS tiers is in
test_dense_backends.py.

Every test fails at teardown if the double judged one of the requests invalid.
"""

import numpy as np
import pytest
from elasticsearch import Elasticsearch

from annotation.models import Repository
from retrieval.dense.elasticsearch_knn import (
    ElasticsearchKnnIndex,
    ElasticsearchKnnWriter,
    index_name_for,
    vector_index_type,
)
from retrieval.dense.store import EmbeddingStoreWriter
from retrieval.lexical.elasticsearch_backend import ElasticsearchBackendError
from retrieval.models import IndexKind, RetrievalIndex
from retrieval.selectors import dense_index_for, index_current
from retrieval.services.indexing import embeddings_build
from tests.factories import RepositoryFactory, UtteranceFactory
from tests.retrieval.es_double import ElasticsearchDouble

INDEX = "wellchosen-vectors.subs-v1"


def unit(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def store_of(tmp_path, ids, vectors):
    writer = EmbeddingStoreWriter(tmp_path / "store", count=len(ids), dim=vectors.shape[1], dtype="float16", model="t")
    writer.append(np.asarray(ids), vectors)
    return writer.close()


@pytest.mark.parametrize(
    ("version", "dims", "configured", "expected"),
    [
        ("8.15.3", 384, "auto", "int8_hnsw"),
        ("8.17.0", 384, "auto", "int8_hnsw"),  # bbq_hnsw was a technical preview until 8.18
        ("8.18.1", 384, "auto", "bbq_hnsw"),
        ("9.1.0", 384, "auto", "bbq_hnsw"),
        ("9.1.0", 32, "auto", "int8_hnsw"),  # BBQ needs 64 dimensions or more
        ("9.1.0", 384, "int8_hnsw", "int8_hnsw"),
    ],
)
def test_the_quantised_hnsw_type_follows_the_server_version(version, dims, configured, expected):
    assert vector_index_type(server_version=version, dims=dims, configured=configured) == expected


@pytest.mark.parametrize(("version", "expected"), [("8.15.3", "int8_hnsw"), ("8.18.1", "bbq_hnsw")])
def test_the_index_maps_one_strict_dense_vector_with_an_explicit_quantised_hnsw(version, expected):
    # given a server of that version
    with ElasticsearchDouble(version=version) as double:
        client = Elasticsearch(double.url, request_timeout=10)
        # when a writer creates the index for 384-dimension vectors
        writer = ElasticsearchKnnWriter(client=client, index_name=INDEX, dims=384)
        # then the mapping names the quantised HNSW type, dot_product similarity and no _source
        [body] = double.sent("PUT", f"/{INDEX}")
        vector = body["mappings"]["properties"]["vector"]
        assert writer.index_type == expected
        assert vector == {
            "type": "dense_vector",
            "dims": 384,
            "index": True,
            "similarity": "dot_product",
            "index_options": {"type": expected, "m": 16, "ef_construction": 100},
        }
        assert body["mappings"]["_source"] == {"enabled": False} and body["mappings"]["dynamic"] == "strict"
        assert body["settings"]["refresh_interval"] == "-1"
        client.close()
        assert not double.errors


def test_vectors_are_bulk_indexed_under_their_utterance_ids_and_searchable_after_finish(es, es_client):
    # given a writer with bulk requests of two documents
    writer = ElasticsearchKnnWriter(client=es_client, index_name=INDEX, dims=16, bulk_threads=1, bulk_chunk=2)
    vectors = unit(5)
    # when the encoding step hands it two chunks, then finishes
    writer.add(np.array([11, 12, 13]), vectors[:3])
    writer.add(np.array([14, 15]), vectors[3:])
    writer.finish(expected=5)
    # then each bulk request carries index actions whose _id is the utterance id, the vector alone as source
    bodies = es.sent("PUT", "/_bulk")
    assert [[line["index"]["_id"] for line in body[::2]] for body in bodies] == [["11", "12"], ["13"], ["14", "15"]]
    assert np.allclose(bodies[0][1]["vector"], vectors[0], atol=1e-5) and set(bodies[0][1]) == {"vector"}
    # and the index is refreshed and holds the five vectors
    assert es.indices[INDEX].settings["refresh_interval"] == "1s" and len(es.indices[INDEX].visible) == 5


def test_a_refused_vector_fails_the_load_naming_the_index_and_the_utterance(es, es_client):
    writer = ElasticsearchKnnWriter(client=es_client, index_name=INDEX, dims=16)
    not_unit = unit(2) * 2  # dot_product similarity takes unit-length vectors only
    with pytest.raises(ElasticsearchBackendError, match=rf"refused 2 vector\(s\) while loading '{INDEX}'.*'7'"):
        writer.add(np.array([7, 8]), not_unit)
    es.errors.clear()  # the refusals were the point


def test_finish_refuses_an_index_that_does_not_hold_the_whole_store(es, es_client):
    writer = ElasticsearchKnnWriter(client=es_client, index_name=INDEX, dims=16)
    writer.add(np.array([1, 2]), unit(2))
    with pytest.raises(ElasticsearchBackendError, match="holds 2 vectors, the store 3"):
        writer.finish(expected=3)


def test_an_existing_index_is_not_overwritten(es, es_client):
    ElasticsearchKnnWriter(client=es_client, index_name=INDEX, dims=16)
    with pytest.raises(ElasticsearchBackendError, match="already exists"):
        ElasticsearchKnnWriter(client=es_client, index_name=INDEX, dims=16)
    es.errors.clear()


def test_knn_queries_go_in_msearch_batches_asking_k_times_rerank_candidates(es, es_client, tmp_path):
    # given 200 vectors indexed and stored
    ids, vectors = np.arange(100, 300), unit(200)
    writer = ElasticsearchKnnWriter(client=es_client, index_name=INDEX, dims=16)
    writer.add(ids, vectors)
    writer.finish(expected=200)
    index = ElasticsearchKnnIndex(
        store_of(tmp_path, ids, vectors), client=es_client, index_name=INDEX, rerank=4, msearch_batch=64
    )
    # when 130 queries ask for their top 10
    scores, found = index.search(vectors[:130], k=10)
    # then three _msearch requests carry one kNN search each, for 10 x 4 hits among twice as many candidates
    bodies = es.sent("POST", f"/{INDEX}/_msearch")
    assert [len(body) // 2 for body in bodies] == [64, 64, 2]
    search = bodies[0][1]
    assert {key: search["knn"][key] for key in ("field", "k", "num_candidates")} == {
        "field": "vector",
        "k": 40,
        "num_candidates": 80,
    }
    assert (search["size"], search["_source"]) == (40, False) and len(search["knn"]["query_vector"]) == 16
    # and each query finds itself first, scored by its cosine
    assert list(found[:, 0]) == list(ids[:130]) and np.allclose(scores[:, 0], 1.0, atol=1e-3)


def test_without_reranking_the_cluster_scores_come_back_as_cosines(es, es_client, tmp_path):
    ids, vectors = np.arange(20), unit(20)
    writer = ElasticsearchKnnWriter(client=es_client, index_name=INDEX, dims=16)
    writer.add(ids, vectors)
    writer.finish(expected=20)
    index = ElasticsearchKnnIndex(store_of(tmp_path, ids, vectors), client=es_client, index_name=INDEX, rerank=0)
    scores, found = index.search(vectors[:2], k=3)
    assert np.allclose(scores, np.einsum("qkd,qd->qk", vectors[found], vectors[:2]), atol=1e-4)


def test_hits_the_store_does_not_hold_are_an_error(es, es_client, tmp_path):
    # given an index that holds an utterance its store lacks (the two from different builds)
    writer = ElasticsearchKnnWriter(client=es_client, index_name=INDEX, dims=16)
    writer.add(np.array([1, 2, 3]), unit(3))
    writer.finish(expected=3)
    index = ElasticsearchKnnIndex(store_of(tmp_path, [1, 2], unit(2)), client=es_client, index_name=INDEX, rerank=2)
    with pytest.raises(ElasticsearchBackendError, match="returned utterances \\[3\\]"):
        index.search(unit(1), k=3)


def test_index_names_cannot_meet_the_bm25_index_names():
    assert index_name_for("subs-v3") == "wellchosen-vectors.subs-v3"  # a slug has no dot


@pytest.mark.slow
def test_the_embedding_build_bulk_indexes_the_vectors_and_pools_search_the_cluster(db, es, settings):
    # given dense search on the cluster and a repository of 40 utterances
    settings.ELASTICSEARCH_URL, settings.WELLCHOSEN_DENSE_SEARCH = es.url, "elasticsearch"
    repository = RepositoryFactory(name="subs")
    UtteranceFactory.create_batch(40, repository=repository)
    # when its embeddings are built
    built = embeddings_build(repository=repository)
    # then the vectors are in the cluster under the version's index, recorded on the version
    name = built.params["es_index"]
    assert built.params["search"] == "elasticsearch" and name == f"wellchosen-vectors.subs-v{built.version}"
    assert len(es.indices[name].visible) == 40 and built.params["es_vector_index"] == "int8_hnsw"
    # and it is the current dense index, searched on the cluster
    assert index_current(repository=repository, kind=IndexKind.DENSE) == built
    dense = dense_index_for(built)
    first = dense.store.ids[0]
    assert dense.search(dense.vectors_for([first]), k=1)[1][0, 0] == first
    assert es.sent("POST", f"/{name}/_msearch")
    # but not once FAISS is configured again: that needs a version of its own
    settings.WELLCHOSEN_DENSE_SEARCH = "faiss"
    assert index_current(repository=Repository.objects.get(pk=repository.pk), kind=IndexKind.DENSE) is None


@pytest.mark.slow
def test_replaced_versions_delete_their_cluster_index(db, es, settings):
    # given dense search on the cluster and three builds of one repository
    settings.ELASTICSEARCH_URL, settings.WELLCHOSEN_DENSE_SEARCH = es.url, "elasticsearch"
    repository = RepositoryFactory(name="subs")
    UtteranceFactory.create_batch(5, repository=repository)
    versions = [embeddings_build(repository=repository) for _ in range(3)]
    # then the oldest version's cluster index is gone, the two newest remain (a pool job may read the previous)
    assert sorted(es.indices) == sorted(v.params["es_index"] for v in versions[1:])
    assert RetrievalIndex.objects.filter(repository=repository, kind=IndexKind.DENSE).count() == 3


@pytest.mark.slow
def test_a_build_replaces_the_cluster_index_a_crashed_build_of_its_version_left(db, es, es_client, settings):
    # given the cluster index of version 1, left by a build whose version row was rolled back
    settings.ELASTICSEARCH_URL, settings.WELLCHOSEN_DENSE_SEARCH = es.url, "elasticsearch"
    ElasticsearchKnnWriter(client=es_client, index_name=index_name_for("subs-v1"), dims=384).add(
        np.array([999]), unit(1, dim=384)
    )
    repository = RepositoryFactory(name="subs")
    UtteranceFactory.create_batch(3, repository=repository)
    # when version 1 is built
    built = embeddings_build(repository=repository)
    # then it holds the repository's utterances only
    assert built.version == 1 and "999" not in es.indices[built.params["es_index"]].docs
    assert len(es.indices[built.params["es_index"]].docs) == 3


def test_repositories_named_with_capitals_get_lowercase_knn_indexes_of_their_own(db, es, settings):
    # given Elasticsearch as the dense search (the double refuses names with capitals as a cluster
    # does), and two repositories whose names differ only in case
    settings.ELASTICSEARCH_URL, settings.WELLCHOSEN_DENSE_SEARCH = es.url, "elasticsearch"
    upper, lower = RepositoryFactory(name="Subs"), RepositoryFactory(name="subs")
    for repository in (upper, lower):
        UtteranceFactory.create_batch(3, repository=repository)
    # when each one's embeddings are built
    built = [embeddings_build(repository=r) for r in (upper, lower)]
    # then each has a cluster index of its own, lowercase, holding its 3 utterances
    names = [b.params["es_index"] for b in built]
    assert names == [index_name_for(f"subs.{upper.pk}-v1"), index_name_for("subs-v1")]
    assert all(name == name.lower() and len(es.indices[name].docs) == 3 for name in names)
