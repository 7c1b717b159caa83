"""A local HTTP test double of Elasticsearch 8.15, for exercising the real ``elasticsearch`` client.

It implements only what the BM25 backend (``ElasticsearchBackend``) and the kNN backend
(``ElasticsearchKnnIndex``) use, checks the requests it receives (media types, index settings and
mapping, bulk and msearch NDJSON) and answers in Elasticsearch's wire format, with the
``X-Elastic-Product`` header the 8.x client insists on. Text is scored by Lucene's BM25 over a crude
English analysis (lower case, words, stop words, suffix stripping); a ``knn`` search by the exact
similarity of the stored vectors (the score Elasticsearch gives, ``(1 + dot product) / 2``), where a
real cluster walks a quantised HNSW graph. Documents become searchable after a refresh. ``version``
is the server version it reports (``bbq_hnsw`` is refused before 8.16, as by Elasticsearch).
``requests`` records (method, path, parsed body) for every request; ``errors`` every request judged
invalid (answered 400), unknown endpoints included.
"""

import json
import math
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np

from tests.retrieval.es_analysis import STOP_WORDS, analyze
from tests.retrieval.es_double_knn import KnnRequests
from tests.retrieval.es_wire import SHARDS, EsError, Request, invalid, not_found

VERSION = "8.15.3"
RESPONSE_TYPE = "application/vnd.elasticsearch+json; compatible-with=8"
JSON_TYPES = {"application/json", "application/vnd.elasticsearch+json"}
NDJSON_TYPES = {"application/x-ndjson", "application/vnd.elasticsearch+x-ndjson"}
K1, B = 1.2, 0.75


@dataclass
class FakeIndex:
    name: str
    settings: dict[str, Any]
    mappings: dict[str, Any]
    stop_words: frozenset[str]
    docs: dict[str, Any] = field(default_factory=dict)  # everything indexed: a text, or a vector
    visible: dict[str, Any] = field(default_factory=dict)  # as of the last refresh
    aliases: set[str] = field(default_factory=set)
    refreshes: int = 0
    seq_no: int = 0
    _postings: dict[str, dict[str, int]] | None = None
    _lengths: dict[str, int] = field(default_factory=dict)

    def refresh(self) -> None:
        self.visible, self._postings, self.refreshes = dict(self.docs), None, self.refreshes + 1

    def _index(self) -> dict[str, dict[str, int]]:
        if self._postings is None:  # rebuilt lazily after each refresh
            self._postings, self._lengths = {}, {}
            for doc_id, text in self.visible.items():
                terms = analyze(text, self.stop_words)
                self._lengths[doc_id] = len(terms)
                for term, tf in Counter(terms).items():
                    self._postings.setdefault(term, {})[doc_id] = tf
        return self._postings

    def search(self, query: str) -> list[tuple[str, float]]:
        """Lucene BM25 of an OR of the query's terms; ties in index order, as Lucene's doc ids."""
        postings, n_docs = self._index(), len(self.visible)
        avgdl = (sum(self._lengths.values()) / n_docs) if n_docs else 0.0
        scores: dict[str, float] = {}
        for term in analyze(query, self.stop_words):
            docs = postings.get(term, {})
            idf = math.log(1 + (n_docs - len(docs) + 0.5) / (len(docs) + 0.5))
            for doc_id, tf in docs.items():
                norm = K1 * (1 - B + B * self._lengths[doc_id] / avgdl)
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf / (tf + norm)
        order = {doc_id: i for i, doc_id in enumerate(self.visible)}
        return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))

    @property
    def vector_field(self) -> str | None:
        fields = [name for name, spec in self.mappings["properties"].items() if spec.get("type") == "dense_vector"]
        return fields[0] if fields else None

    def knn(self, query_vector: list[float], k: int) -> list[tuple[str, float]]:
        """The exact top k by the field's similarity; ties in index order, as Lucene's doc ids."""
        if not self.visible:
            return []
        doc_ids = list(self.visible)
        matrix = np.asarray([self.visible[d] for d in doc_ids], dtype=np.float32)
        query = np.asarray(query_vector, dtype=np.float32)
        if self.mappings["properties"][self.vector_field]["similarity"] == "cosine":
            matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
            query = query / np.linalg.norm(query)
        scores = (1.0 + matrix @ query) / 2.0
        order = np.lexsort((np.arange(len(doc_ids)), -scores))[:k]
        return [(doc_ids[i], float(scores[i])) for i in order]


def _flat_settings(settings: Any) -> dict[str, Any]:
    if not isinstance(settings, dict):
        raise invalid("settings must be an object", "parse_exception")
    return {**{key: value for key, value in settings.items() if key != "index"}, **(settings.get("index") or {})}


class ElasticsearchDouble(KnnRequests):
    def __init__(self, version: str = VERSION) -> None:
        self.version = version
        self.indices: dict[str, FakeIndex] = {}
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self.url = ""
        self._lock = threading.RLock()

    def __enter__(self) -> "ElasticsearchDouble":
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.double = self  # type: ignore[attr-defined]
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="es-double", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def sent(self, method: str, path: str) -> list[Any]:
        """Bodies of the recorded requests with this method and path (query string excluded)."""
        return [r.body for r in self.requests if r.method == method and r.path.split("?")[0] == path]

    def handle(self, method: str, path: str, headers: Any, raw: bytes) -> tuple[int, Any]:
        parts = [unquote(part) for part in urlsplit(path).path.split("/") if part]
        ndjson = bool(parts) and parts[-1] in ("_bulk", "_msearch")
        body: Any = raw.decode("utf-8", "replace") or None
        try:
            try:
                self._check_media_types(headers, bool(raw), ndjson)
                body = self._parse(raw, ndjson)
            finally:
                self.requests.append(Request(method, path, body))
            with self._lock:
                return self._route(method, parts, body)
        except EsError as exc:
            if exc.invalid:
                self.errors.append(f"{method} {path}: {exc}")
            return exc.status, exc.body()
        except Exception as exc:  # a request the double cannot read, or a bug in it: fail loudly, not silently
            self.errors.append(f"{method} {path}: the double failed: {exc!r}")
            return 500, EsError(500, "exception", repr(exc)).body()

    @staticmethod
    def _check_media_types(headers: Any, has_body: bool, ndjson: bool) -> None:
        wanted = [("Accept", JSON_TYPES), ("Content-Type", NDJSON_TYPES if ndjson else JSON_TYPES)][: 1 + has_body]
        for header, allowed in wanted:
            value = headers.get(header) or ""
            mime, *params = [piece.strip().lower() for piece in value.split(";")]
            version = dict(p.split("=", 1) for p in params if "=" in p).get("compatible-with")
            if value and (mime not in allowed or (mime.startswith("application/vnd.") and version != "8")):
                raise invalid(f"Invalid media-type value on headers [{header}]: {value}", "media_type_header_exception")

    @staticmethod
    def _parse(raw: bytes, ndjson: bool) -> Any:
        if not raw:
            return None
        try:
            text = raw.decode("utf-8")
            if not ndjson:
                return json.loads(text)
            if not text.endswith("\n"):
                raise invalid("The bulk request must be terminated by a newline [\\n]")
            return [json.loads(line) for line in text.split("\n") if line.strip()]
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise invalid(f"failed to parse request body: {exc}", "x_content_parse_exception") from exc

    def _route(self, method: str, parts: list[str], body: Any) -> tuple[int, Any]:
        match method, parts:
            case "GET", []:
                return 200, self._info()
            case (("PUT" | "POST"), ["_bulk"]):
                return 200, self._bulk(body or [])
            case (("GET" | "POST"), ["_msearch"]):
                return 200, self._msearch(None, body or [])
            case (("GET" | "POST"), [name, "_msearch"]):
                return 200, self._msearch(name, body or [])
            case "POST", ["_aliases"]:
                return 200, self._update_aliases(body or {})
            case "GET", ["_alias", alias]:
                found = {i.name: {"aliases": {alias: {}}} for i in self.indices.values() if alias in i.aliases}
                return (200, found) if found else (404, {"error": f"alias [{alias}] missing", "status": 404})
            case "HEAD", [name] if not name.startswith("_"):
                return (200 if self._resolve(name, required=False) else 404), None
            case "PUT", [name] if not name.startswith("_"):
                return 200, self._create(name, body or {})
            case "DELETE", [name] if not name.startswith("_"):
                return 200, self._delete(name)
            case "PUT", [name, "_settings"]:
                return 200, self._put_settings(name, body or {})
            case "POST", [name, "_refresh"]:
                self._resolve(name).refresh()
                return 200, {"_shards": {"total": 1, "successful": 1, "failed": 0}}
            case (("GET" | "POST"), [name, "_count"]) if body is None:
                return 200, {"count": len(self._resolve(name).visible), "_shards": SHARDS}
        raise invalid(f"no handler found for uri [/{'/'.join(parts)}] and method [{method}]")

    def _resolve(self, name: str, *, required: bool = True) -> FakeIndex | None:
        if name in self.indices:
            return self.indices[name]
        holders = [index for index in self.indices.values() if name in index.aliases]
        if not holders and required:
            raise not_found(name)
        return holders[0] if holders else None

    def _info(self) -> dict[str, Any]:
        version = dict(number=self.version, build_flavor="default", build_type="docker", lucene_version="9.11.1")
        version.update(minimum_wire_compatibility_version="7.17.0", minimum_index_compatibility_version="7.0.0")
        return {"name": "es-double", "cluster_name": "wellchosen-test", "version": version}

    def _create(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        if name != name.lower():
            raise EsError(
                400, "invalid_index_name_exception", f"Invalid index name [{name}], must be lowercase", invalid=True
            )
        if self._resolve(name, required=False):
            raise EsError(400, "resource_already_exists_exception", f"index [{name}] already exists", index=name)
        if set(body) - {"settings", "mappings"}:
            raise invalid(f"unknown keys {sorted(body)} for create index (the double takes settings and mappings)")
        settings = _flat_settings(body.get("settings", {}))
        mappings = body.get("mappings") or {}
        if set(mappings.get("properties") or {}) == {"vector"}:
            self._check_vector_mapping(mappings)
            self.indices[name] = FakeIndex(name, settings, mappings, frozenset())
            return {"acknowledged": True, "shards_acknowledged": True, "index": name}
        analyzers = (settings.get("analysis") or {}).get("analyzer") or {}
        english = {key: spec for key, spec in analyzers.items() if spec.get("type") == "english"}
        if not english:
            raise invalid("settings define no analyzer of type [english]")
        if set(mappings) != {"dynamic", "_source", "properties"} or set(mappings["properties"]) != {"text"}:
            raise invalid(f"expected dynamic, _source and one [text] property: {mappings}", "mapper_parsing_exception")
        if mappings["dynamic"] != "strict" or mappings["_source"] != {"enabled": False}:
            raise invalid("the mapping must be strict, with _source disabled", "mapper_parsing_exception")
        text = mappings["properties"]["text"]
        if text.get("type") != "text" or text.get("analyzer") not in english or set(text) - {"type", "analyzer"}:
            raise invalid(f"[text] must be a text field with an english analyzer: {text}", "mapper_parsing_exception")
        stop_words = english[text["analyzer"]].get("stopwords", "_english_")
        if not (isinstance(stop_words, list) or stop_words in ("_english_", "_none_")):
            raise invalid(f"invalid stopwords {stop_words!r}")
        words = STOP_WORDS if stop_words == "_english_" else frozenset(w.lower() for w in stop_words or [])
        self.indices[name] = FakeIndex(name, settings, mappings, words)
        return {"acknowledged": True, "shards_acknowledged": True, "index": name}

    def _put_settings(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        index, updates = self._resolve(name), _flat_settings(body)
        if not updates or set(updates) - {"refresh_interval", "number_of_replicas"}:
            raise invalid(f"Can't update non dynamic settings [{sorted(updates)}] for open indices")
        index.settings.update(updates)
        return {"acknowledged": True}

    def _delete(self, name: str) -> dict[str, Any]:
        if name not in self.indices:
            raise not_found(name)
        del self.indices[name]
        return {"acknowledged": True}

    def _update_aliases(self, body: dict[str, Any]) -> dict[str, Any]:
        actions = body.get("actions")
        if not isinstance(actions, list) or not actions:
            raise invalid("[actions] is required and must not be empty", "action_request_validation_exception")
        plan: list[tuple[str, FakeIndex, str]] = []
        for action in actions:
            if not isinstance(action, dict) or len(action) != 1 or next(iter(action)) not in ("add", "remove"):
                raise invalid(f"unsupported alias action {action}")
            (kind, spec) = next(iter(action.items()))
            name, alias = spec.get("index"), spec.get("alias")
            if not name or not alias or "*" in name + alias:
                raise invalid(f"{kind} needs a concrete [index] and [alias] (the double has no wildcards): {spec}")
            index = self.indices.get(name)
            if index is None:
                raise not_found(name)
            if kind == "add" and alias in self.indices:
                raise invalid(f"an index is named as the alias [{alias}]", "invalid_alias_name_exception")
            if kind == "remove" and alias not in index.aliases:
                if spec.get("must_exist") is False:
                    continue
                reason = f"aliases [{alias}] missing"
                raise EsError(404, "aliases_not_found_exception", reason, **{"resource.id": alias})
            plan.append((kind, index, alias))
        for kind, index, alias in plan:  # all or nothing, as Elasticsearch
            (index.aliases.add if kind == "add" else index.aliases.discard)(alias)
        return {"acknowledged": True, "errors": False}

    def _bulk(self, lines: list[Any]) -> dict[str, Any]:
        items = []
        if not lines or len(lines) % 2:
            raise invalid("expected action and source lines in pairs", "action_request_validation_exception")
        for action, source in zip(lines[::2], lines[1::2], strict=True):
            meta = action.get("index") if isinstance(action, dict) and len(action) == 1 else None
            if not isinstance(meta, dict) or set(meta) != {"_index", "_id"} or not isinstance(meta["_id"], str):
                raise invalid(f"expected an [index] action with _index and a string _id, got {action}")
            if not isinstance(source, dict):
                raise invalid(f"expected a source object after {action}, got {source}")
            item: dict[str, Any] = {"_index": meta["_index"], "_id": meta["_id"]}
            index = self._resolve(meta["_index"], required=False)
            failure = not_found(meta["_index"]) if index is None else None
            stray = sorted(set(source) - set(index.mappings["properties"])) if index else []
            if index and stray:
                reason = f"mapping set to strict, dynamic introduction of {stray} within [_doc] is not allowed"
                failure = EsError(400, "strict_dynamic_mapping_exception", reason)
            elif index and index.vector_field:
                failure = self._vector_failure(index, source.get(index.vector_field))
            if failure:
                self.errors.append(f"bulk item {item['_id']}: {failure}")
                item.update(status=failure.status, error=failure.body()["error"]["root_cause"][0])
            else:
                created = meta["_id"] not in index.docs
                index.docs[meta["_id"]] = source[index.vector_field] if index.vector_field else source.get("text", "")
                index.seq_no += 1
                shards = {"total": 1, "successful": 1, "failed": 0}
                item.update(_index=index.name, _version=1, result="created" if created else "updated", _shards=shards)
                item.update(_seq_no=index.seq_no - 1, _primary_term=1, status=201 if created else 200)
            items.append({"index": item})
        return {"errors": any("error" in i["index"] for i in items), "took": 1, "items": items}

    def _msearch(self, path_index: str | None, lines: list[Any]) -> dict[str, Any]:
        started, responses = time.monotonic(), []
        if not lines or len(lines) % 2:
            raise invalid("expected header and body lines in pairs", "action_request_validation_exception")
        for header, body in zip(lines[::2], lines[1::2], strict=True):
            name = header.get("index", path_index) if isinstance(header, dict) and set(header) <= {"index"} else None
            if not name:
                raise invalid(f"unsupported msearch header, or no index named: {header}")
            query, size, track_total_hits = self._check_search(body)
            try:
                index = self._resolve(name)
                ranked = self._knn(index, query) if isinstance(query, dict) else index.search(query)
            except EsError as exc:
                if exc.invalid:
                    self.errors.append(f"msearch on {name}: {exc}")
                responses.append({**exc.body(), "status": exc.status})
                continue
            hits = [{"_index": index.name, "_id": doc_id, "_score": score} for doc_id, score in ranked[:size]]
            found: dict[str, Any] = {"max_score": max((h["_score"] for h in hits), default=None), "hits": hits}
            if track_total_hits is not False:
                found = {"total": {"value": len(ranked), "relation": "eq"}, **found}
            responses.append({"took": 1, "timed_out": False, "_shards": SHARDS, "hits": found, "status": 200})
        return {"took": int((time.monotonic() - started) * 1000), "responses": responses}

    @classmethod
    def _check_search(cls, body: Any) -> tuple[Any, int, Any]:
        if not isinstance(body, dict) or set(body) - {"query", "knn", "size", "_source", "track_total_hits"}:
            raise invalid(f"unsupported search body {body}", "parsing_exception")
        if "knn" in body:
            return cls._check_knn(body)
        query = body.get("query")
        if not isinstance(query, dict) or list(query) != ["match"] or list(query["match"]) != ["text"]:
            raise invalid(f"expected query.match.text, got {query}", "parsing_exception")
        text, size = query["match"]["text"], body.get("size", 10)
        if isinstance(text, dict):
            text = text.get("query") if set(text) == {"query"} else None
        if not isinstance(text, str) or not isinstance(size, int) or size < 0:
            raise invalid(f"expected match.text.query as a string and a size >= 0: {body}", "parsing_exception")
        if body.get("_source") is not False:
            raise invalid("_source must be false: the mapping disables it", "parsing_exception")
        return text, size, body.get("track_total_hits")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the client's connection pool expects
    disable_nagle_algorithm = True  # else headers and body, written apart, wait 40 ms for a delayed ACK

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status, payload = self.server.double.handle(self.command, self.path, self.headers, raw)  # type: ignore[attr-defined]
        data = b"" if payload is None else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("content-type", RESPONSE_TYPE)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _answer
