"""Elasticsearch's wire format as the test double answers it: the request record, errors with
their JSON body, and the shard summary of every answer."""

from typing import Any, NamedTuple

SHARDS = {"total": 1, "successful": 1, "skipped": 0, "failed": 0}


class Request(NamedTuple):
    method: str
    path: str
    body: Any


class EsError(Exception):
    """An error answer; ``invalid`` ones (bad requests) are recorded in ``errors``."""

    def __init__(self, status: int, kind: str, reason: str, *, invalid: bool = False, **extra: Any) -> None:
        super().__init__(f"{kind}: {reason}")
        self.status, self.kind, self.reason, self.invalid, self.extra = status, kind, reason, invalid, extra

    def body(self) -> dict[str, Any]:
        cause = {"type": self.kind, "reason": self.reason, **self.extra}
        return {"error": {"root_cause": [cause], **cause}, "status": self.status}


def invalid(reason: str, kind: str = "illegal_argument_exception") -> EsError:
    return EsError(400, kind, reason, invalid=True)


def not_found(name: str) -> EsError:
    extra = {"resource.type": "index_or_alias", "resource.id": name, "index_uuid": "_na_", "index": name}
    return EsError(404, "index_not_found_exception", f"no such index [{name}]", **extra)
