"""ElasticsearchBackend through the real ``elasticsearch`` client against a local test double.

Every test fails at teardown if the double judged one of the backend's requests invalid.
"""

import pytest
from elasticsearch import BadRequestError

from retrieval.lexical.base import TIE_MARGIN, Hit
from retrieval.lexical.elasticsearch_backend import ANALYZER, ElasticsearchBackend, ElasticsearchBackendError

INDEX = "wellchosen-subs-v1"
UTTERANCES = [
    (11, "The train to Leeds leaves at six."),
    (12, "I love the smell of rain."),
    (13, "Where is the station?"),
]


@pytest.fixture
def backend(es, es_client):
    def make(index_name: str = INDEX, **options) -> ElasticsearchBackend:
        return ElasticsearchBackend(index_name=index_name, url=es.url, client=es_client, **options)

    return make


def bulk_ids(es) -> list[list[str]]:
    """The _id of every action line, per bulk request."""
    return [[line["index"]["_id"] for line in body[::2]] for body in es.sent("PUT", "/_bulk")]


def test_build_creates_the_versioned_index_with_english_analyzer_strict_mapping_and_no_source(es, backend):
    # given a backend for version 1 of a repository's index
    # when it builds
    count = backend().build(UTTERANCES)
    # then the index is created under its versioned name, ready for a bulk load
    assert count == 3
    [body] = es.sent("PUT", f"/{INDEX}")
    settings, mappings = body["settings"], body["mappings"]
    assert (settings["number_of_replicas"], settings["refresh_interval"]) == (0, "-1")
    analyzer = settings["analysis"]["analyzer"][ANALYZER]
    assert analyzer["type"] == "english" and {"the", "you", "what"} <= set(analyzer["stopwords"])
    assert mappings == {
        "dynamic": "strict",
        "_source": {"enabled": False},
        "properties": {"text": {"type": "text", "analyzer": ANALYZER}},
    }


def test_build_sends_ndjson_bulk_requests_with_utterance_ids_as_document_ids(es, backend):
    # given five utterances and chunks of two
    utterances = [(100 + i, f"line number {i}") for i in range(5)]
    progress = []
    # when they are built with one bulk thread
    backend(bulk_chunk=2, bulk_threads=1).build(utterances, on_progress=progress.append)
    # then three bulk requests carry index actions whose _id is the utterance id, text alone as source
    assert bulk_ids(es) == [["100", "101"], ["102", "103"], ["104"]]
    first = es.sent("PUT", "/_bulk")[0]
    assert first[0] == {"index": {"_index": INDEX, "_id": "100"}} and first[1] == {"text": "line number 0"}
    assert es.indices[INDEX].docs["104"] == "line number 4"
    # and progress is reported after each chunk
    assert progress == [2, 4, 5]


def test_build_restores_the_refresh_interval_then_refreshes(es, backend):
    # given an index loaded with refreshes disabled
    # when the build finishes
    backend().build(UTTERANCES)
    # then refresh_interval is back to 1s and the index was refreshed once, after that
    assert es.sent("PUT", f"/{INDEX}/_settings") == [{"index": {"refresh_interval": "1s"}}]
    assert es.indices[INDEX].settings["refresh_interval"] == "1s"
    assert es.indices[INDEX].refreshes == 1
    paths = [r.path for r in es.requests]
    assert paths.index(f"/{INDEX}/_settings") < paths.index(f"/{INDEX}/_refresh")


def test_build_points_the_unversioned_alias_at_the_new_index(es, backend):
    # given version 1 built, holding the alias
    backend("wellchosen-subs-v1").build(UTTERANCES)
    assert es.indices["wellchosen-subs-v1"].aliases == {"wellchosen-subs"}
    # when version 2 is built
    backend("wellchosen-subs-v2").build(UTTERANCES)
    # then one atomic update moved the alias from version 1 to version 2
    assert es.sent("POST", "/_aliases")[-1] == {
        "actions": [
            {"remove": {"index": "wellchosen-subs-v1", "alias": "wellchosen-subs"}},
            {"add": {"index": "wellchosen-subs-v2", "alias": "wellchosen-subs"}},
        ]
    }
    assert (es.indices["wellchosen-subs-v1"].aliases, es.indices["wellchosen-subs-v2"].aliases) == (
        set(),
        {"wellchosen-subs"},
    )


def test_building_an_index_that_already_exists_raises(es, backend):
    # given an index already built
    backend().build(UTTERANCES)
    # when the same version is built again
    with pytest.raises(ElasticsearchBackendError, match=rf"index '{INDEX}' already exists"):
        backend().build([(99, "Another line.")])
    # then nothing was loaded into it
    assert len(es.sent("PUT", "/_bulk")) == 1 and "99" not in es.indices[INDEX].docs


def test_a_document_the_index_refuses_fails_the_build_with_a_clear_message(es, backend):
    # given a backend that sends a field the strict mapping does not know
    class StrayField(ElasticsearchBackend):
        def _actions(self, utterances):
            for action in super()._actions(utterances):
                yield {**action, "speaker": "BIANCA"}

    stray = StrayField(index_name=INDEX, url=es.url, client=backend().client)
    # when it builds
    with pytest.raises(ElasticsearchBackendError, match=r"refused 3 document\(s\).*strict_dynamic_mapping_exception"):
        stray.build(UTTERANCES)
    # then the double saw the refused documents (expected here)
    assert len(es.errors) == 3
    es.errors.clear()


def test_search_sends_msearch_in_batches_with_size_k_plus_the_tie_margin_and_no_source(es, backend):
    # given a built index searched five queries at a time, two per msearch
    subs = backend(msearch_batch=2)
    subs.build(UTTERANCES)
    # when five queries are searched for the top 2
    subs.search(["train", "rain", "station", "smell", "Leeds"], k=2)
    # then three msearch requests went to the versioned index, each body asking for k hits (and the
    # margin that catches hits tied with the k-th) without _source
    batches = es.sent("POST", f"/{INDEX}/_msearch")
    assert [len(batch) // 2 for batch in batches] == [2, 2, 1]
    bodies = [line for batch in batches for line in batch[1::2]]
    assert [body["query"]["match"]["text"]["query"] for body in bodies] == [
        "train",
        "rain",
        "station",
        "smell",
        "Leeds",
    ]
    assert all(body["size"] == 2 + TIE_MARGIN and body["_source"] is False for body in bodies)


def test_search_returns_hits_best_first_with_integer_ids(backend):
    # given a built index
    subs = backend()
    subs.build(UTTERANCES + [(14, "The train, the train, the last train home.")])
    # when a query matches two utterances
    [hits] = subs.search(["train"], k=10)
    # then they come best first, as integer utterance ids with float scores
    assert [hit.utterance_id for hit in hits] == [14, 11]
    assert all(isinstance(hit, Hit) and isinstance(hit.utterance_id, int) for hit in hits)
    assert hits[0].score > hits[1].score > 0


def test_content_words_drive_the_match(backend):
    # given utterances sharing only stop words with the query, and one sharing its content words
    subs = backend()
    subs.build(UTTERANCES)
    # when the query is a question about the train
    [hits] = subs.search(["When does the train leave?"], k=3)
    # then the train utterance ranks first
    assert hits[0].utterance_id == 11


def test_a_query_of_stop_words_only_finds_nothing(backend):
    # given a built index
    subs = backend()
    subs.build(UTTERANCES)
    # when the query is made only of stop words
    # then no utterance matches
    assert subs.search(["the and of"], k=3) == [[]]


def test_an_empty_query_returns_no_hits_and_sends_nothing(es, backend):
    # given a built index
    subs = backend()
    subs.build(UTTERANCES)
    # when only empty or blank queries are searched
    results = subs.search(["", "   \n"], k=3)
    # then each gets no hits and no msearch was sent
    assert results == [[], []]
    assert es.sent("POST", f"/{INDEX}/_msearch") == []


def test_empty_queries_keep_their_place_among_others(es, backend):
    # given a built index
    subs = backend()
    subs.build(UTTERANCES)
    # when an empty query sits between two real ones
    results = subs.search(["rain", "", "station"], k=1)
    # then results line up with the queries, and only the real ones were sent
    assert [[hit.utterance_id for hit in hits] for hits in results] == [[12], [], [13]]
    [batch] = es.sent("POST", f"/{INDEX}/_msearch")
    assert len(batch) == 4


def test_a_failed_search_names_the_query(backend):
    # given a backend whose index was never built
    # when it is searched
    # then the error names the query and the missing index
    with pytest.raises(ElasticsearchBackendError, match=r"query 'rain'.*index_not_found_exception"):
        backend().search(["rain"], k=3)


def test_exists_and_delete(es):
    # given a backend with a client of its own, built from the url
    subs = ElasticsearchBackend(index_name=INDEX, url=es.url)
    try:
        assert not subs.exists()
        subs.build(UTTERANCES)
        assert subs.exists()
        # when it is deleted twice
        subs.delete()
        subs.delete()
        # then the index is gone, and the second delete was a no-op
        assert not subs.exists() and INDEX not in es.indices
        assert subs.describe() == f"elasticsearch:{INDEX}"
    finally:
        subs.client.close()


def test_the_double_records_a_request_the_backend_should_never_make(es, es_client):
    # given the real client
    # when it calls an endpoint the double does not implement
    with pytest.raises(BadRequestError):
        es_client.perform_request("GET", "/_cat/indices")
    # then the double answered 400 and recorded the request as an error
    assert es.errors == [
        "GET /_cat/indices: illegal_argument_exception: no handler found for uri [/_cat/indices] and method [GET]"
    ]
    es.errors.clear()
