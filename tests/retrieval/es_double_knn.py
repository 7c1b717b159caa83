"""The kNN part of the Elasticsearch test double (tests/retrieval/es_double.py): the dense_vector
mapping, the vectors of bulk documents and the knn searches it accepts, checked as Elasticsearch
8.x checks them."""

from typing import TYPE_CHECKING, Any

from tests.retrieval.es_wire import EsError, invalid

if TYPE_CHECKING:
    from tests.retrieval.es_double import FakeIndex

VECTOR_TYPES = {"hnsw", "int8_hnsw", "int4_hnsw", "bbq_hnsw", "flat", "int8_flat", "int4_flat", "bbq_flat"}
MAX_NUM_CANDIDATES = 10_000


class KnnRequests:
    """Mixed into ElasticsearchDouble (which has ``version``)."""

    version: str

    def _check_vector_mapping(self, mappings: dict[str, Any]) -> None:
        """A strict mapping, _source disabled, one indexed dense_vector field with an HNSW type."""
        if set(mappings) != {"dynamic", "_source", "properties"}:
            raise invalid(f"expected dynamic, _source and properties: {mappings}", "mapper_parsing_exception")
        if mappings["dynamic"] != "strict" or mappings["_source"] != {"enabled": False}:
            raise invalid("the mapping must be strict, with _source disabled", "mapper_parsing_exception")
        spec = mappings["properties"]["vector"]
        known = {"type", "dims", "index", "similarity", "index_options", "element_type"}
        if spec.get("type") != "dense_vector" or set(spec) - known:
            raise invalid(f"[vector] must be a dense_vector field: {spec}", "mapper_parsing_exception")
        dims = spec.get("dims")
        if not isinstance(dims, int) or not 1 <= dims <= 4096 or spec.get("element_type", "float") != "float":
            raise invalid(
                f"[dims] must be an integer from 1 to 4096, of float elements: {spec}", "mapper_parsing_exception"
            )
        if spec.get("index") is not True or spec.get("similarity") not in ("dot_product", "cosine"):
            raise invalid(
                f"the double searches indexed dot_product or cosine vectors: {spec}", "mapper_parsing_exception"
            )
        options = spec.get("index_options") or {}
        kind = options.get("type")
        if kind not in VECTOR_TYPES or set(options) - {"type", "m", "ef_construction", "confidence_interval"}:
            raise invalid(f"unknown index_options {options}", "mapper_parsing_exception")
        major, minor = (int(part) for part in self.version.split(".")[:2])
        if kind.startswith("bbq") and ((major, minor) < (8, 16) or dims < 64):
            raise invalid(f"[index_options] unknown type [{kind}] (or fewer than 64 dims)", "mapper_parsing_exception")

    @staticmethod
    def _vector_failure(index: "FakeIndex", vector: Any) -> EsError | None:
        spec = index.mappings["properties"][index.vector_field]
        if not isinstance(vector, list) or len(vector) != spec["dims"]:
            got = len(vector) if isinstance(vector, list) else type(vector).__name__
            reason = f"The [dense_vector] field [{index.vector_field}] has {spec['dims']} dims, got {got}"
            return EsError(400, "document_parsing_exception", reason)
        if not all(isinstance(x, (int, float)) for x in vector):
            return EsError(400, "document_parsing_exception", "vector elements must be numbers")
        if spec["similarity"] == "dot_product" and abs(sum(x * x for x in vector) - 1.0) > 1e-4:
            reason = "The [dot_product] similarity can only be used with unit-length vectors."
            return EsError(400, "document_parsing_exception", reason)
        return None

    @staticmethod
    def _knn(index: "FakeIndex", knn: dict[str, Any]) -> list[tuple[str, float]]:
        field_name, spec = index.vector_field, None
        if field_name:
            spec = index.mappings["properties"][field_name]
        if knn["field"] != field_name or spec is None:
            raise invalid(f"field [{knn['field']}] is not a dense_vector field of [{index.name}]")
        if len(knn["query_vector"]) != spec["dims"]:
            raise invalid(f"the query vector has {len(knn['query_vector'])} dims, the field {spec['dims']}")
        return index.knn(knn["query_vector"], knn["k"])

    @staticmethod
    def _check_knn(body: dict[str, Any]) -> tuple[dict[str, Any], int, Any]:
        knn, size = body["knn"], body.get("size", 10)
        if not isinstance(knn, dict) or set(knn) != {"field", "query_vector", "k", "num_candidates"} or "query" in body:
            raise invalid(
                f"expected knn with field, query_vector, k and num_candidates alone: {knn}", "parsing_exception"
            )
        k, candidates, vector = knn["k"], knn["num_candidates"], knn["query_vector"]
        if not isinstance(k, int) or not isinstance(candidates, int) or k < 1:
            raise invalid(f"[k] and [num_candidates] must be integers, k >= 1: {knn}", "parsing_exception")
        if candidates < k or candidates > MAX_NUM_CANDIDATES:
            raise invalid(f"[num_candidates] must be from [k] to {MAX_NUM_CANDIDATES}, got {candidates} (k {k})")
        if not isinstance(vector, list) or not all(isinstance(x, (int, float)) for x in vector):
            raise invalid("[query_vector] must be a list of numbers", "parsing_exception")
        if not isinstance(size, int) or size < 0 or body.get("_source") is not False:
            raise invalid(f"expected a size >= 0 and _source false: {body}", "parsing_exception")
        return knn, size, body.get("track_total_hits")
