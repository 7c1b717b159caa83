"""One behaviour suite for every lexical backend: tantivy always, Elasticsearch through the
real client against the local test double always, and a real cluster when ELASTICSEARCH_URL
is set (e.g. `docker compose up elasticsearch` and ELASTICSEARCH_URL=http://localhost:9200)."""

import os
import uuid

import pytest

from retrieval.lexical.base import Hit, LexicalBackend
from retrieval.lexical.elasticsearch_backend import ElasticsearchBackend
from retrieval.lexical.tantivy_backend import TantivyBackend
from tests.retrieval.es_double import ElasticsearchDouble

UTTERANCES = [
    (101, "The train to Leeds leaves at six."),
    (102, "I love the smell of rain in the morning."),
    (103, "Where is the station? I need to catch a train."),
    (104, "Trains are always late on Sundays."),
    (105, "Could you pass me the salt, please?"),
    (106, "We should buy a new umbrella before it rains."),
    (107, "You and I were there, weren't we?"),
]


@pytest.fixture(params=["tantivy", "elasticsearch-double", "elasticsearch"])
def make_backend(request, tmp_path):
    """A factory of empty backends with unique index names."""
    made: list[LexicalBackend] = []
    if request.param == "tantivy":

        def make() -> LexicalBackend:
            return TantivyBackend(index_name=f"wellchosen-test-{uuid.uuid4().hex[:8]}-v1", root=tmp_path)

        yield make
        return
    if request.param == "elasticsearch":
        url = os.environ.get("ELASTICSEARCH_URL")
        if not url:
            pytest.skip("ELASTICSEARCH_URL is not set: no real Elasticsearch cluster to test against")
        double = None
    else:
        double = ElasticsearchDouble().__enter__()
        url = double.url

    def make() -> LexicalBackend:
        backend = ElasticsearchBackend(index_name=f"wellchosen-test-{uuid.uuid4().hex[:8]}-v1", url=url)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.delete()
    if double is not None:
        double.__exit__(None, None, None)
        assert not double.errors, f"the Elasticsearch double refused requests: {double.errors}"


@pytest.fixture
def built(make_backend):
    backend = make_backend()
    assert backend.build(iter(UTTERANCES)) == len(UTTERANCES)
    return backend


def ids(hits: list[Hit]) -> list[int]:
    return [h.utterance_id for h in hits]


def test_a_built_index_exists_and_cannot_be_built_twice(make_backend):
    backend = make_backend()
    assert not backend.exists()
    backend.build(iter(UTTERANCES))
    assert backend.exists()
    with pytest.raises(Exception):  # noqa: B017 (each backend raises its own error type)
        backend.build(iter(UTTERANCES))


def test_content_words_drive_the_match(built):
    # given a query whose only content words are "train" and "leave"
    [hits] = built.search(["When does the train leave?"], k=3)
    # then the utterance about a train leaving ranks first
    assert hits[0].utterance_id == 101
    assert set(ids(hits)) <= {101, 103, 104}


def test_stems_match_inflected_forms(built):
    [hits] = built.search(["trains"], k=10)
    assert {101, 103, 104} <= set(ids(hits))


def test_a_query_of_stop_words_alone_finds_nothing(built):
    # "you", "and", "I", "were", "we" are stop words; a dialogue full of them must not match on them
    assert built.search(["You and I, were we?"], k=5) == [[]]


def test_hits_are_best_first_and_limited_to_k(built):
    [hits] = built.search(["train station rain umbrella"], k=2)
    assert len(hits) == 2
    assert hits[0].score >= hits[1].score > 0


def test_results_line_up_with_a_batch_of_queries(built):
    queries = ["salt please", "", "umbrella", "nothing matches zyxwv"]
    results = built.search(queries, k=5)
    assert len(results) == 4
    assert ids(results[0])[0] == 105
    assert results[1] == [] and results[3] == []
    assert ids(results[2])[0] == 106


def test_query_syntax_characters_are_plain_text(built):
    [hits] = built.search(['rain AND (smell) OR "morning" NOT: salt^2 -x +y ~ * ? \\ /'], k=5)
    assert 102 in ids(hits)


def test_many_queries_in_one_call(built):
    results = built.search(["train"] * 450, k=3)
    assert len(results) == 450 and all(ids(r)[0] in {101, 103, 104} for r in results)


def test_deleting_removes_the_index_and_is_idempotent(built):
    built.delete()
    assert not built.exists()
    built.delete()


def test_the_description_names_backend_and_index(built):
    assert built.describe() == f"{built.kind}:{built.index_name}"


# Texts with the same words (order, case and punctuation aside) score the same for any query.
TIED = [
    (300 + n, text)
    for n, text in enumerate(["Things are going well.", "things going well are", "Well, things are going!"] * 12)
]


@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_equal_scores_come_in_utterance_id_order_however_the_index_was_built(make_backend, order):
    # given an index of 36 utterances that all score the same, added in either order, beside others
    tied = [(i, f"{text} ({i})") for i, text in TIED]  # distinct texts; the number is no word of the query
    backend = make_backend()
    backend.build(iter(UTTERANCES + (tied if order == "ascending" else tied[::-1])))
    # when the top 3 are asked for (the tie runs far past k and past the margin asked beyond it)
    (hits,) = backend.search(["things are going well"], k=3)
    # then the three lowest utterance ids of the tie come first, in id order
    assert ids(hits) == [300, 301, 302]
    assert len({h.score for h in hits}) == 1
