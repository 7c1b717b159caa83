"""export_testset: write a frozen test set to a directory in the formats asked for, each file checked
against the sha256 its manifest recorded."""

import hashlib
import os
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import UserError
from core.gc_pause import gc_paused
from testsets.formats.base import manifest_bytes, recorded_version
from testsets.formats.registry import (
    EXPORT_FILES,
    FORMATS,
    export_filename,
    render_exports,
)
from testsets.models import TestSet


@dataclass
class TestsetExport:
    paths: list[Path]
    # Files written in another format version than the one their manifest records the sha256 of.
    notes: list[str] = field(default_factory=list)


@gc_paused()
def testset_export(
    *,
    name: str,
    formats: list[str],
    out_dir: Path,
    csv_version: int | None = None,
    jsonl_version: int | None = None,
    original_text: bool = False,
) -> TestsetExport:
    """Write the files of each format plus the manifest, then what a format writes besides (the
    Hugging Face folder). Every file is checked against the sha256 its manifest recorded when the
    test set was built; a mismatch means the test set was altered.

    Files are written in the current version of their format (``csv_version`` and
    ``jsonl_version`` pick the CSV's and the JSONL's).
    A test set built before a format changed records the sha256 of the older version: the rows
    are checked against it (rendered in that version, in memory), and a note says which version
    was written, so published hashes keep proving the test set unaltered.

    With ``original_text``, each file that carries texts is written a second time with the texts as
    they were imported where a normaliser changed them (``<name>.original.tsv``, ...), beside the
    files the manifest records, which stay as they are."""
    testset = TestSet.objects.select_related("dataset").filter(name=name).first()
    if testset is None:
        raise UserError(f"no test set {name!r}")
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise UserError(f"unknown format(s) {', '.join(unknown)}; expected {', '.join(FORMATS)}")
    chosen = {"csv": csv_version, "jsonl": jsonl_version}
    for kind, version in chosen.items():
        current = EXPORT_FILES[kind].version
        if version is not None and not 1 <= version <= current:
            raise UserError(f"the {kind.upper()} has format versions 1 to {current}, not {version}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    kinds = [file.kind for f in formats for file in FORMATS[f].files]
    if original_text and not any(EXPORT_FILES[kind].texts for kind in kinds):
        texts = ", ".join(name for name, f in FORMATS.items() if any(file.texts for file in f.files))
        raise UserError(f"--original-text writes the files of {texts}; none of them was asked for")
    export = (
        _files_write(testset, kinds=kinds, chosen=chosen, out_dir=out_dir, original_text=original_text)
        if kinds
        else TestsetExport([])
    )
    for f in formats:
        export.paths += FORMATS[f].folder_write(testset, out_dir)
    return export


def _files_write(
    testset: TestSet, *, kinds: list[str], chosen: dict, out_dir: Path, original_text: bool = False
) -> TestsetExport:
    """The files of ``kinds`` and the manifest, each checked before any is moved into place (and,
    with ``original_text``, the files of the original texts, which no manifest records)."""
    name = testset.name
    notes = []
    # Every file is written beside its target and checked first; only when all match are
    # they moved into place, so a failed export leaves nothing half-written. One read of the test
    # set renders every file (and the recorded version of a file written in another version).
    partials: list[tuple[Path, Path]] = []
    wanted: list[tuple[str, int]] = []
    for kind in kinds:
        target = out_dir / export_filename(testset, kind)
        partials.append((target.with_name(target.name + ".partial"), target))
        wanted.append((kind, chosen.get(kind) or EXPORT_FILES[kind].version))
    recorded = [recorded_version(testset, kind) for kind, _ in wanted]
    extra = [(kind, r) for (kind, version), r in zip(wanted, recorded, strict=True) if r != version]
    originals = [(kind, version) for kind, version in wanted if original_text and EXPORT_FILES[kind].texts]
    checked_partials = list(partials)
    for kind, _ in originals:
        target = out_dir / EXPORT_FILES[kind].original_filename(testset)
        partials.append((target.with_name(target.name + ".partial"), target))
    # rendered: the files the manifest records, those of the original texts, then those only checked
    n_written = len(partials)
    try:
        rendered = render_exports(
            testset, wanted + originals + extra, originals=[False] * len(wanted) + [True] * len(originals)
        )
        digests = _write([p for p, _ in partials], rendered, n_written + len(extra))
        extra_digests = iter(digests[n_written:])
        for (kind, version), r, (_, target), digest in zip(
            wanted, recorded, checked_partials, digests[: len(wanted)], strict=True
        ):
            checked = digest if version == r else next(extra_digests)
            expected = testset.manifest["files"][kind]["sha256"]
            if checked != expected:
                raise UserError(
                    f"test set {name!r}: {target.name} does not match its manifest (sha256 {checked} != "
                    f"{expected}); the test set was altered after it was built"
                )
            if version != r:
                notes.append(
                    f"{target.name}: written in {kind} format version {version} (sha256 {digest}); the manifest "
                    f"records the sha256 of version {r}, which the test set still matches"
                )
    except BaseException:
        for partial, _ in partials:
            partial.unlink(missing_ok=True)
        raise
    for partial, target in partials:
        os.replace(partial, target)
    manifest = out_dir / f"{testset.name}.manifest.json"
    manifest.write_bytes(manifest_bytes(testset))
    if originals:
        notes.append(
            f"{', '.join(target.name for _, target in partials[len(wanted) :])}: the texts as imported, where a "
            "normaliser changed them; the manifest records none of these files"
        )
    return TestsetExport([target for _, target in partials] + [manifest], notes)


def _write(paths: list[Path], rendered: Iterator[tuple[str, ...]], n: int) -> list[str]:
    """Write the first ``len(paths)`` of the ``n`` exports of ``rendered`` (render_exports) to
    ``paths``; the sha256 of every export, those written and those only checked."""
    digests = [hashlib.sha256() for _ in range(n)]
    with ExitStack() as stack:
        handles = [stack.enter_context(open(path, "wb")) for path in paths]
        for chunks in rendered:
            for i, chunk in enumerate(chunks):
                data = chunk.encode("utf-8")
                digests[i].update(data)
                if i < len(handles):
                    handles[i].write(data)
    return [d.hexdigest() for d in digests]
