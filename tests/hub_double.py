"""A Hugging Face hub double: model repositories served over HTTP on 127.0.0.1 the way the hub
serves them to huggingface_hub's client (repo info, the file tree, HEAD and GET of a file), so
that the tests run the real client: its cache, offline mode, revisions and errors.

Endpoints (huggingface_hub's hf_api.py, file_download.py, _snapshot_download.py):

- ``GET /api/models/{repo}/revision/{revision}``: JSON with ``id``, ``sha`` (the commit) and ``siblings``;
- ``GET /api/models/{repo}/tree/{revision}``: the files as JSON (``type``, ``path``, ``size``, ``oid``);
- ``HEAD|GET /{repo}/resolve/{revision}/{filename}``: the file, with ``X-Repo-Commit``, ``ETag`` and
  ``Content-Length``.

Errors carry the hub's ``X-Error-Code`` (RepoNotFound, RevisionNotFound, EntryNotFound), from which
the client raises its own exceptions.
"""

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass
class Repository:
    refs: dict[str, str] = field(default_factory=dict)  # branch or tag -> commit
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # commit -> path -> content

    def commit_of(self, revision: str) -> str | None:
        if revision in self.commits:
            return revision
        return self.refs.get(revision)


class HubDouble:
    def __init__(self) -> None:
        self.repositories: dict[str, Repository] = {}
        self.requests: list[str] = []  # "METHOD path", in order
        self.authorizations: list[str] = []  # the Authorization headers sent
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def publish(
        self,
        repo_id: str,
        folder: Path,
        *,
        ref: str = "main",
        skip: tuple[str, ...] = (),
        extra: dict[str, bytes] | None = None,
    ) -> str:
        """A commit on ``ref`` of ``repo_id`` of ``folder``'s files but those named in ``skip`` (a name
        part: "token" skips the tokenizer files), and of the ``extra`` files (which replace any of the
        same name); its sha."""
        files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not any(s in p.name for s in skip)}
        return self.commit(repo_id, files | (extra or {}), ref=ref)

    def commit(self, repo_id: str, files: dict[str, bytes], *, ref: str = "main") -> str:
        repository = self.repositories.setdefault(repo_id, Repository())
        digest = hashlib.sha1(f"{repo_id} {ref} {len(repository.commits)}".encode())
        for path, content in sorted(files.items()):
            digest.update(path.encode() + hashlib.sha1(content).digest())
        sha = digest.hexdigest()
        repository.commits[sha] = dict(files)
        repository.refs[ref] = sha
        return sha

    @contextmanager
    def running(self) -> Iterator["HubDouble"]:
        double = self

        class Handler(_Handler):
            hub = double

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
            thread.join()


def _blob_id(content: bytes) -> str:
    """git's blob id, as the hub gives for files outside LFS."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    hub: HubDouble
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - BaseHTTPRequestHandler's signature
        pass

    def do_GET(self):
        self._answer(body=True)

    def do_HEAD(self):
        self._answer(body=False)

    def _answer(self, *, body: bool) -> None:
        path = urlsplit(self.path).path
        self.hub.requests.append(f"{self.command} {path}")
        if self.headers.get("Authorization"):
            self.hub.authorizations.append(self.headers["Authorization"])
        if path.startswith("/api/models/"):
            repo_id, rest = self._repository(path[len("/api/models/") :])
            if repo_id is None:
                return self._error(404, "RepoNotFound")
            action, _, revision = rest.partition("/")
            commit = self.hub.repositories[repo_id].commit_of(unquote(revision))
            if commit is None:
                return self._error(404, "RevisionNotFound")
            files = self.hub.repositories[repo_id].commits[commit]
            if action == "revision":
                info = {"id": repo_id, "sha": commit, "siblings": [{"rfilename": name} for name in sorted(files)]}
                return self._json(info, body=body)
            if action == "tree":
                tree = [
                    {"type": "file", "path": name, "size": len(content), "oid": _blob_id(content)}
                    for name, content in sorted(files.items())
                ]
                return self._json(tree, body=body)
            return self._error(404, "EntryNotFound")
        repo_id, rest = self._repository(path[1:])
        if repo_id is None or not rest.startswith("resolve/"):
            return self._error(404, "RepoNotFound")
        revision, _, filename = rest[len("resolve/") :].partition("/")
        commit = self.hub.repositories[repo_id].commit_of(unquote(revision))
        if commit is None:
            return self._error(404, "RevisionNotFound")
        content = self.hub.repositories[repo_id].commits[commit].get(unquote(filename))
        if content is None:
            return self._error(404, "EntryNotFound", commit=commit)
        self.send_response(200)
        self.send_header("X-Repo-Commit", commit)
        self.send_header("ETag", f'"{_blob_id(content)}"')
        self.send_header("Content-Length", str(len(content)))
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        if body:
            self.wfile.write(content)

    def _repository(self, path: str) -> tuple[str | None, str]:
        """The repository a path starts with (an id has one slash at most) and the rest of the path."""
        for repo_id in sorted(self.hub.repositories, key=len, reverse=True):
            if path.startswith(repo_id + "/"):
                return repo_id, path[len(repo_id) + 1 :]
        return None, ""

    def _json(self, data, *, body: bool) -> None:
        payload = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def _error(self, status: int, code: str, *, commit: str = "") -> None:
        payload = json.dumps({"error": code}).encode()
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", code)
        if commit:
            self.send_header("X-Repo-Commit", commit)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)


def hub_configure(monkeypatch, *, endpoint: str, home: Path, offline: bool) -> None:
    """Point huggingface_hub at ``endpoint`` with its cache in ``home``, online or not: the environment
    variables (for child processes) and the values huggingface_hub read from them when it was imported."""
    from huggingface_hub import constants

    cache = home / "hub"
    for name, value in {
        "HF_ENDPOINT": endpoint,
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(cache),
        "HF_HUB_OFFLINE": "1" if offline else "0",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline)
