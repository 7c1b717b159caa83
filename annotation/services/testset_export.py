"""export_testset: write a frozen test set to a directory and check it against its manifest."""

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from annotation.models import TestSet
from annotation.testset_io import (
    FORMAT_FILES,
    FORMAT_VERSIONS,
    export_filename,
    manifest_bytes,
    recorded_version,
    render_export,
)
from core.errors import UserError


@dataclass
class TestsetExport:
    paths: list[Path]
    # Files written in another format version than the one their manifest records the sha256 of.
    notes: list[str] = field(default_factory=list)


def testset_export(
    *,
    name: str,
    formats: list[str],
    out_dir: Path,
    csv_version: int | None = None,
    jsonl_version: int | None = None,
) -> TestsetExport:
    """Write the files of each format plus the manifest. Every file is checked against the sha256
    its manifest recorded when the test set was built; a mismatch means the test set was altered.

    Files are written in the current version of their format (``csv_version`` and
    ``jsonl_version`` pick the CSV's and the JSONL's).
    A test set built before a format changed records the sha256 of the older version: the rows
    are checked against it (rendered in that version, in memory), and a note says which version
    was written, so published hashes keep proving the test set unaltered."""
    testset = TestSet.objects.select_related("dataset").filter(name=name).first()
    if testset is None:
        raise UserError(f"no test set {name!r}")
    unknown = [f for f in formats if f not in FORMAT_FILES]
    if unknown:
        raise UserError(f"unknown format(s) {', '.join(unknown)}; expected {', '.join(FORMAT_FILES)}")
    chosen = {"csv": csv_version, "jsonl": jsonl_version}
    for kind, version in chosen.items():
        if version is not None and not 1 <= version <= FORMAT_VERSIONS[kind]:
            raise UserError(f"the {kind.upper()} has format versions 1 to {FORMAT_VERSIONS[kind]}, not {version}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    notes = []
    # Every file is written beside its target and checked first; only when all match are
    # they moved into place, so a failed export leaves nothing half-written.
    partials: list[tuple[Path, Path]] = []
    try:
        for kind in [k for f in formats for k in FORMAT_FILES[f]]:
            target = out_dir / export_filename(testset, kind)
            partial = target.with_name(target.name + ".partial")
            partials.append((partial, target))
            version = chosen.get(kind) or FORMAT_VERSIONS[kind]
            recorded = recorded_version(testset, kind)
            digest = _write(partial, render_export(testset, kind, version=version))
            checked = digest if version == recorded else _digest(render_export(testset, kind, version=recorded))
            expected = testset.manifest["files"][kind]["sha256"]
            if checked != expected:
                raise UserError(
                    f"test set {name!r}: {target.name} does not match its manifest (sha256 {checked} != "
                    f"{expected}); the test set was altered after it was built"
                )
            if version != recorded:
                notes.append(
                    f"{target.name}: written in {kind} format version {version} (sha256 {digest}); the manifest "
                    f"records the sha256 of version {recorded}, which the test set still matches"
                )
    except BaseException:
        for partial, _ in partials:
            partial.unlink(missing_ok=True)
        raise
    for partial, target in partials:
        os.replace(partial, target)
    manifest = out_dir / f"{testset.name}.manifest.json"
    manifest.write_bytes(manifest_bytes(testset))
    return TestsetExport([target for _, target in partials] + [manifest], notes)


def _digest(chunks) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk.encode("utf-8"))
    return digest.hexdigest()


def _write(path: Path, chunks) -> str:
    digest = hashlib.sha256()
    with open(path, "wb") as handle:
        for chunk in chunks:
            data = chunk.encode("utf-8")
            digest.update(data)
            handle.write(data)
    return digest.hexdigest()
