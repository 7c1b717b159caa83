"""The export formats of a frozen test set, by name (``export_testset --format``, ``import_testset
--format``), and the files they write, by kind (the manifest's "files", the admin's downloads).

A new format is a TestsetFormat subclass in a module of its own, listed here.
"""

import itertools
from collections.abc import Callable, Iterator, Sequence

from core.errors import UserError
from testsets.items import TestSetItem, original_texts, testset_items
from testsets.models import TestSet

from .base import ExportFile, TestsetFormat
from .csv import CSVFormat
from .hf import HFFormat
from .jsonl import JSONLFormat
from .tsv import TSVFormat

# In the order the admin lists their downloads and export_testset writes them.
FORMATS: dict[str, TestsetFormat] = {f.name: f for f in (TSVFormat(), JSONLFormat(), CSVFormat(), HFFormat())}
# Every file recorded in a manifest, by kind ("tsv", "human_scores", "jsonl", "csv").
EXPORT_FILES: dict[str, ExportFile] = {file.kind: file for f in FORMATS.values() for file in f.files}


def format_get(name: str) -> TestsetFormat:
    if name not in FORMATS:
        raise UserError(f"unknown format {name!r}; expected {', '.join(FORMATS)}")
    return FORMATS[name]


def default_formats() -> list[str]:
    """What export_testset writes when no format is named."""
    return [name for name, f in FORMATS.items() if f.default]


def readable_formats() -> list[str]:
    """The formats import_testset reads back."""
    return [name for name, f in FORMATS.items() if f.import_params is not None]


def export_filename(testset: TestSet, kind: str) -> str:
    return EXPORT_FILES[kind].filename(testset)


def version_check(kind: str, version: int) -> None:
    current = EXPORT_FILES[kind].version
    if not 1 <= version <= current:
        raise UserError(f"{kind} has format versions 1 to {current}, not {version}")


def render_export(testset: TestSet, kind: str, *, version: int | None = None) -> Iterator[str]:
    """The export ``kind`` in its format ``version`` (the current one by default)."""
    file = EXPORT_FILES[kind]
    version = file.version if version is None else version
    version_check(kind, version)
    return file.rendered(testset, version=version)


def render_exports(
    testset: TestSet,
    wanted: list[tuple[str, int]],
    *,
    originals: Sequence[bool] = (),
    seen: Callable[[TestSetItem], None] | None = None,
) -> Iterator[tuple[str, ...]]:
    """Several exports (``(kind, version)`` each) in one read of the test set: tuples of the next
    chunk of each, in the order of ``wanted`` ("" for one that has ended). Those whose flag in
    ``originals`` is set are written with the texts as imported (testsets.items.original_texts).
    ``seen`` is called with each item as it is read (for another use of the same read)."""
    for kind, version in wanted:
        version_check(kind, version)
    items = testset_items(testset, original_text=any(originals))
    if seen is not None:
        items = _seen(items, seen)
    # The renderers take one chunk per item (the CSV a header first), so the copies tee keeps of
    # the items not yet rendered by all stay a few items long.
    streams = list(itertools.tee(items, len(wanted)))
    for i, original in enumerate(originals):
        if original:
            streams[i] = original_texts(streams[i])
    renderers = [
        EXPORT_FILES[kind].render(items, testset, version)
        for items, (kind, version) in zip(streams, wanted, strict=True)
    ]
    return itertools.zip_longest(*renderers, fillvalue="")


def _seen(items: Iterator[TestSetItem], seen: Callable[[TestSetItem], None]) -> Iterator[TestSetItem]:
    for item in items:
        seen(item)
        yield item
