"""The export formats of a frozen test set, by name (``export_testset --format``, ``import_testset
--format``), and the files they write, by kind (the manifest's "files", the admin's downloads).

A new format is a TestsetFormat subclass in a module of its own, listed here.
"""

from collections.abc import Callable, Iterator, Sequence
from functools import partial

from django.conf import settings

from core.errors import UserError
from core.forked import ForkedCall, fork_available
from testsets.items import TestSetItem, original_texts, testset_item_chunks
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


# Questions read, and rendered, at a time by render_exports.
EXPORT_BLOCK = 5000


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
    chunk of each, in the order of ``wanted`` ("" for one without text in that chunk). Those whose
    flag in ``originals`` is set are written with the texts as imported
    (testsets.items.original_texts). ``seen`` is called with each item as it is read (for another
    use of the same read).

    The test set is read a block of questions at a time. For a large test set, where the machine
    can fork, the exports that cost most to render (``ExportFile.render_apart``: the JSONL and the
    CSV) are rendered in a forked child from its copy of each block, while this process renders
    the others and reads the next block (in its own transaction: a build's rows are not committed
    yet): two cores instead of one, the same bytes."""
    for kind, version in wanted:
        version_check(kind, version)
    flags = list(originals) + [False] * (len(wanted) - len(originals))
    # Loaded here: a renderer reads the dataset (the CSV its context turns), and a forked child
    # must never use this process's database connection.
    testset.dataset  # noqa: B018
    parts = [
        _Part(EXPORT_FILES[kind], testset, version, original)
        for (kind, version), original in zip(wanted, flags, strict=True)
    ]
    questions = testset.manifest.get("counts", {}).get("questions", 0)
    apart = forks_for(questions=questions) and any(part.file.render_apart for part in parts)
    here = [i for i, part in enumerate(parts) if not (apart and part.file.render_apart)]
    elsewhere = [i for i in range(len(parts)) if i not in here]
    blocks = testset_item_chunks(testset, chunk=EXPORT_BLOCK, original_text=any(flags))
    return _rendered(parts, here, elsewhere, blocks, seen)


def forks_for(*, questions: int) -> bool:
    """Whether work on a test set of ``questions`` questions is shared with a forked child (its
    files here, the build's audit): large enough (WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS) on a
    machine that can fork."""
    return questions >= settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS and fork_available()


class _Part:
    """One export of render_exports, rendered a block of items at a time."""

    def __init__(self, file: ExportFile, testset: TestSet, version: int, original: bool) -> None:
        self.file, self.testset, self.version, self.original = file, testset, version, original
        # What the renderer writes before its first item (the CSV's header): only the first block has it.
        self.preamble = "".join(file.render(iter(()), testset, version))

    def block(self, items: list[TestSetItem], *, first: bool) -> str:
        text = "".join(self.file.render(original_texts(items) if self.original else items, self.testset, self.version))
        return text if first else text[len(self.preamble) :]


def _rendered(
    parts: list[_Part],
    here: list[int],
    elsewhere: list[int],
    blocks: Iterator[list[TestSetItem]],
    seen: Callable[[TestSetItem], None] | None,
) -> Iterator[tuple[str, ...]]:
    def texts(indices: list[int], items: list[TestSetItem], first: bool) -> list[str]:
        return [parts[i].block(items, first=first) for i in indices]

    pending: tuple[list[str], ForkedCall | None] | None = None  # the previous block's texts
    try:
        first = True
        for items in blocks:  # reading a block overlaps the child's rendering of the previous one
            if seen is not None:
                for item in items:
                    seen(item)
            if pending is not None:
                yield _merged(parts, here, elsewhere, *pending)
                pending = None
            child = ForkedCall(partial(texts, elsewhere, items, first)) if elsewhere else None
            pending = ([], child)  # the finally below ends the child if rendering here fails
            pending = (texts(here, items, first), child)
            first = False
        if pending is not None:
            yield _merged(parts, here, elsewhere, *pending)
            pending = None
        elif first:  # no question: each file as the renderer writes it for none
            yield tuple(part.preamble for part in parts)
    finally:
        if pending is not None and pending[1] is not None:
            pending[1].close()


def _merged(
    parts: list[_Part], here: list[int], elsewhere: list[int], texts_here: list[str], child: ForkedCall | None
) -> tuple[str, ...]:
    merged = [""] * len(parts)
    for i, text in zip(here, texts_here, strict=True):
        merged[i] = text
    if child is not None:
        for i, text in zip(elsewhere, child.result(), strict=True):
            merged[i] = text
    return tuple(merged)
