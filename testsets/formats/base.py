"""What every export format of a frozen test set offers (TSV, JSONL, CSV, the Hugging Face folder).

A format is a class (registry.py lists them). It may write files whose sha256 the test set's
manifest records at build time (``files``: rendered from the frozen rows, as text lines, so that
exports stream), a folder of its own (``folder_write``), downloads for the admin (``downloads``),
and name the job that reads it back (``import_params``).
"""

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from core.job_registry import JobParams
from testsets.items import TestSetItem, testset_items
from testsets.models import TestSet

# A renderer: the test set's items (in order), the test set and a format version -> text chunks.
Renderer = Callable[[Iterable[TestSetItem], TestSet, int], Iterator[str]]


@dataclass(frozen=True)
class ExportFile:
    """One file of a format, recorded in the manifest under ``kind`` with its sha256 and version."""

    kind: str  # the manifest's key, the download's key
    suffix: str  # after the test set's name: "<name><suffix>"
    content_type: str
    version: int  # the current version of its format; older ones re-create the bytes of older builds
    render: Renderer
    texts: bool = True  # whether it carries the test set's texts (an export of the originals has one too)
    # Rendered in a forked child beside the other files of a large export (registry.render_exports):
    # the files whose rendering costs most.
    render_apart: bool = False

    def filename(self, testset: TestSet) -> str:
        return f"{testset.name}{self.suffix}"

    def original_filename(self, testset: TestSet) -> str:
        """The file with the texts as imported (``export_testset --original-text``), beside this one."""
        return f"{testset.name}.original{self.suffix}"

    def rendered(self, testset: TestSet, *, version: int | None = None) -> Iterator[str]:
        """The file of ``testset`` in format ``version`` (the current one by default), read anew."""
        return self.render(testset_items(testset), testset, self.version if version is None else version)


@dataclass(frozen=True)
class Download:
    """A file the admin offers for a test set. ``body`` returns bytes (sent whole) or an iterator of
    bytes (streamed)."""

    key: str  # in the URL: download/<key>/
    filename: str
    content_type: str  # the full header value
    body: Callable[[], bytes | Iterator[bytes]]


class TestsetFormat:
    """A format of ``export_testset --format <name>``. Subclasses set the class variables and
    override what they do differently."""

    name: ClassVar[str]
    # written by export_testset when no --format is given
    default: ClassVar[bool] = True
    files: ClassVar[tuple[ExportFile, ...]] = ()
    # the job kind that imports this format back (import_testset --format <name>); None: no reader
    import_params: ClassVar[type[JobParams] | None] = None

    def downloads(self, testset: TestSet) -> list[Download]:
        """One streamed download per file, rendered in its current version."""

        def body(file: ExportFile) -> Callable[[], Iterator[bytes]]:
            return lambda: (chunk.encode("utf-8") for chunk in file.rendered(testset))

        return [Download(f.kind, f.filename(testset), f"{f.content_type}; charset=utf-8", body(f)) for f in self.files]

    def folder_write(self, testset: TestSet, out_dir: Path) -> list[Path]:
        """Write what the format writes besides its ``files`` (a whole folder, for the Hugging Face
        layout) into ``out_dir``; the paths written."""
        return []


def recorded_version(testset: TestSet, kind: str) -> int:
    """The format version whose sha256 the test set's manifest records for ``kind`` (a manifest
    that names none was built in version 1 of every format)."""
    return testset.manifest["files"][kind].get("format_version", 1)


def manifest_bytes(testset: TestSet) -> bytes:
    """The manifest as the exports write it beside the files (``<name>.manifest.json``)."""
    return (json.dumps(testset.manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
