"""BM25 retrieval on an Elasticsearch cluster, for repositories that outgrow one machine.

Versions: the index settings, mapping and queries below use the Elasticsearch 8.x REST API
and are tested with the official Python client 8.19 against a local HTTP test double
(tests/retrieval/es_double.py) that answers as an 8.15 server; no real cluster runs in
our tests. They use nothing deprecated in 8.x, so they are valid on Elasticsearch 8.x and
9.x alike. Note for anyone adding a ``dense_vector`` field (not used here): from
Elasticsearch 9.1 such fields are indexed with BBQ quantization by default (``bbq_hnsw``
from 384 dimensions, ``int8_hnsw`` below).

One index per repository and version (``wellchosen-subtitles-v3``); the utterance id is
the document ``_id`` and the only field is ``text``, analysed by the English analyzer
with the stop words shared with the tantivy backend, so that content words drive the
match. ``_source`` is disabled: nothing but the id comes back. After a build, the alias
named after the index without its version (``wellchosen-subtitles``) points at it, for
people browsing the cluster; our code always searches the versioned name.
"""

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from typing import Any

from elasticsearch import ApiError, Elasticsearch, NotFoundError, TransportError
from elasticsearch.helpers import BulkIndexError, parallel_bulk

from .base import TIE_MARGIN, Hit, LexicalBackend, tie_may_continue, top_k_stable
from .stopwords import ENGLISH_STOP_WORDS

ANALYZER = "wellchosen_english"
_VERSION_SUFFIX = re.compile(r"-v\d+$")
# The english analyzer's standard tokenizer keeps contractions whole ("don't"), where
# tantivy splits them into stop words ("don", "t"): list the usual ones too.
_CONTRACTIONS = (
    "ain't aren't can't couldn't didn't doesn't don't hadn't hasn't haven't isn't mightn't mustn't needn't "
    "shan't shouldn't wasn't weren't won't wouldn't i'm you're we're they're who're what're i've you've we've "
    "they've could've should've would've might've must've i'll you'll he'll she'll it'll we'll they'll that'll "
    "there'll i'd you'd he'd she'd it'd we'd they'd that'd y'all"
).split()


class ElasticsearchBackendError(RuntimeError):
    """An index could not be built or searched; the message says which and why."""


def stop_words() -> list[str]:
    words = set(ENGLISH_STOP_WORDS) | set(_CONTRACTIONS) | {w.replace("'", "\u2019") for w in _CONTRACTIONS}
    return sorted(words)


def index_body() -> dict[str, Any]:
    """Settings and mapping of a new index (``refresh_interval`` is restored after the load)."""
    return {
        "settings": {
            "number_of_replicas": 0,
            "refresh_interval": "-1",
            "analysis": {"analyzer": {ANALYZER: {"type": "english", "stopwords": stop_words()}}},
        },
        "mappings": {
            "dynamic": "strict",
            "_source": {"enabled": False},
            "properties": {"text": {"type": "text", "analyzer": ANALYZER}},
        },
    }


def _reason(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('type', 'error')}: {error.get('reason', error)}"
    return str(error)


class ElasticsearchBackend(LexicalBackend):
    kind = "elasticsearch"

    def __init__(
        self,
        *,
        index_name: str,
        url: str,
        client: Elasticsearch | None = None,
        bulk_threads: int = 2,
        bulk_chunk: int = 2000,
        msearch_batch: int = 200,
    ) -> None:
        super().__init__(index_name=index_name)
        self.url = url
        self.client = client or Elasticsearch(url, request_timeout=120, retry_on_timeout=True, max_retries=3)
        self.bulk_threads = bulk_threads
        self.bulk_chunk = bulk_chunk
        self.msearch_batch = msearch_batch

    @property
    def alias(self) -> str | None:
        """The unversioned name, or None when the index name has no ``-vN`` suffix."""
        alias = _VERSION_SUFFIX.sub("", self.index_name)
        return alias if alias != self.index_name else None

    def build(self, utterances: Iterable[tuple[int, str]], *, on_progress: Callable[[int], None] | None = None) -> int:
        try:
            self.client.indices.create(index=self.index_name, **index_body())
        except ApiError as exc:
            if _error_type(exc) == "resource_already_exists_exception":
                raise ElasticsearchBackendError(
                    f"Elasticsearch index {self.index_name!r} already exists; build a new version or delete it first"
                ) from exc
            raise ElasticsearchBackendError(f"cannot create Elasticsearch index {self.index_name!r}: {exc}") from exc
        count = self._load(utterances, on_progress)
        self.client.indices.put_settings(index=self.index_name, settings={"index": {"refresh_interval": "1s"}})
        self.client.indices.refresh(index=self.index_name)
        self._point_alias()
        return count

    def _actions(self, utterances: Iterable[tuple[int, str]]) -> Iterator[dict[str, Any]]:
        for utterance_id, text in utterances:
            yield {"_op_type": "index", "_index": self.index_name, "_id": str(utterance_id), "text": text}

    def _rounds(self, utterances: Iterable[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
        """The source in rounds read by the calling thread: parallel_bulk consumes its input in a
        thread of its own, and a database cursor (the usual source) must stay in the thread that
        opened it. A round keeps every bulk thread busy with a few chunks; memory stays bounded."""
        iterator = iter(utterances)
        while round_ := list(islice(iterator, self.bulk_chunk * self.bulk_threads * 4)):
            yield round_

    def _load(self, utterances: Iterable[tuple[int, str]], on_progress: Callable[[int], None] | None) -> int:
        count = 0
        left_as_is = f"index {self.index_name!r} is left incomplete; delete it before building again"
        with bulk_load_errors(index_name=self.index_name, items="document", left_as_is=left_as_is):
            for round_ in self._rounds(utterances):
                results = parallel_bulk(
                    self.client,
                    self._actions(round_),
                    thread_count=self.bulk_threads,
                    chunk_size=self.bulk_chunk,
                    raise_on_error=True,
                    raise_on_exception=True,
                )
                # parallel_bulk yields one result per document, a chunk at a time.
                for _ok, _item in results:
                    count += 1
                    if on_progress and count % self.bulk_chunk == 0:
                        on_progress(count)
        if on_progress and count % self.bulk_chunk:
            on_progress(count)
        return count

    def _point_alias(self) -> None:
        """Move the unversioned alias onto this index in one atomic update."""
        alias = self.alias
        if alias is None:
            return
        try:
            holders = list(self.client.indices.get_alias(name=alias).body)
        except NotFoundError:
            holders = []
        actions: list[dict[str, Any]] = [
            {"remove": {"index": index, "alias": alias}} for index in holders if index != self.index_name
        ]
        actions.append({"add": {"index": self.index_name, "alias": alias}})
        self.client.indices.update_aliases(actions=actions)

    def search(self, queries: Sequence[str], *, k: int) -> list[list[Hit]]:
        results: list[list[Hit]] = [[] for _ in queries]
        # Each query asks for k + TIE_MARGIN hits; one whose answer may have left out a hit tied with
        # its k-th asks again with twice as many (top_k_stable orders ties by utterance id).
        pending = {i: k + TIE_MARGIN for i, query in enumerate(queries) if query and query.strip()}
        while pending:
            again = {}
            to_send = list(pending)
            for start in range(0, len(to_send), self.msearch_batch):
                batch = to_send[start : start + self.msearch_batch]
                for i, hits in zip(batch, self._msearch([(queries[i], pending[i]) for i in batch]), strict=True):
                    if tie_may_continue(hits, k=k, limit=pending[i]):
                        again[i] = pending[i] * 2
                    results[i] = top_k_stable(hits, k)
            pending = again
        return results

    def _msearch(self, searches: list[tuple[str, int]]) -> list[list[Hit]]:
        """One _msearch round trip: (query, size) pairs in, each one's hits best first out."""
        body: list[dict[str, Any]] = []
        for query, size in searches:
            body.append({})
            body.append(
                {
                    "query": {"match": {"text": {"query": query}}},
                    "size": size,
                    "_source": False,
                    "track_total_hits": False,
                }
            )
        response = self.client.msearch(index=self.index_name, searches=body)
        answers = []
        for (query, _), answer in zip(searches, response["responses"], strict=True):
            if "error" in answer:
                raise ElasticsearchBackendError(
                    f"Elasticsearch search in {self.index_name!r} failed for query {query!r} "
                    f"(status {answer.get('status')}): {_reason(answer['error'])}"
                )
            answers.append([Hit(int(hit["_id"]), float(hit["_score"])) for hit in answer["hits"]["hits"]])
        return answers

    def exists(self) -> bool:
        return bool(self.client.indices.exists(index=self.index_name))

    def delete(self) -> None:
        self.client.options(ignore_status=404).indices.delete(index=self.index_name)


def _error_type(exc: ApiError) -> str | None:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("type")
    return None


@contextmanager
def bulk_load_errors(*, index_name: str, items: str, left_as_is: str) -> Iterator[None]:
    """A bulk load's failures as ElasticsearchBackendError: the documents the cluster refused (how
    many, and the first one's id and reason) or the request that failed; ``items`` names what the
    documents hold ("document", "vector"), ``left_as_is`` what becomes of the half-loaded index."""
    try:
        yield
    except BulkIndexError as exc:
        first = next(iter(exc.errors[0].values()), {}) if exc.errors else {}
        raise ElasticsearchBackendError(
            f"Elasticsearch refused {len(exc.errors)} {items}(s) while loading {index_name!r} "
            f"(first: _id {first.get('_id')!r}, {_reason(first.get('error'))}); {left_as_is}"
        ) from exc
    except (ApiError, TransportError) as exc:
        raise ElasticsearchBackendError(f"bulk load of {index_name!r} failed: {exc}; {left_as_is}") from exc
