"""The Elasticsearch wire-format double and a real client of it, for the BM25 and kNN backends; the
tiny sentence encoder as the configured one."""

import pytest
from elasticsearch import Elasticsearch

from tests.retrieval.es_double import ElasticsearchDouble


@pytest.fixture
def es():
    """The double; a test fails at teardown if it judged one of the requests invalid."""
    with ElasticsearchDouble() as double:
        yield double
        assert not double.errors, f"the double refused requests: {double.errors}"


@pytest.fixture
def es_client(es):
    """The real ``elasticsearch`` client of the double (named so as not to hide pytest-django's
    ``client``, the test client of the pages)."""
    client = Elasticsearch(es.url, request_timeout=10)
    yield client
    client.close()


@pytest.fixture
def tiny_encoder(settings, tiny_encoder_dir):
    """The tiny sentence encoder (ONNX int8) here and in the workers; its ONNX export is made here.
    Returns the environment that gives it to a worker process."""
    from retrieval.dense.encoder import get_encoder

    settings.WELLCHOSEN_EMBEDDING_MODEL = str(tiny_encoder_dir)
    settings.WELLCHOSEN_EMBEDDING_BACKEND = "onnx-int8"
    get_encoder()
    return {"WELLCHOSEN_EMBEDDING_MODEL": str(tiny_encoder_dir), "WELLCHOSEN_EMBEDDING_BACKEND": "onnx-int8"}
