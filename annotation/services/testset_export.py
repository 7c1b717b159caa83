"""export_testset: write a frozen test set to a directory and check it against its manifest."""

import hashlib
import os
from pathlib import Path

from annotation.models import TestSet
from annotation.testset_io import FORMAT_FILES, export_filename, manifest_bytes, render_export
from core.errors import UserError


def testset_export(*, name: str, formats: list[str], out_dir: Path) -> list[Path]:
    """Write the files of each format plus the manifest. Every file's sha256 must equal the
    one recorded when the test set was built; a mismatch means the test set was altered."""
    testset = TestSet.objects.select_related("dataset").filter(name=name).first()
    if testset is None:
        raise UserError(f"no test set {name!r}")
    unknown = [f for f in formats if f not in FORMAT_FILES]
    if unknown:
        raise UserError(f"unknown format(s) {', '.join(unknown)}; expected {', '.join(FORMAT_FILES)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # Every file is written beside its target and checked first; only when all match are
    # they moved into place, so a failed export leaves nothing half-written.
    partials: list[tuple[Path, Path]] = []
    try:
        for kind in [k for f in formats for k in FORMAT_FILES[f]]:
            target = out_dir / export_filename(testset, kind)
            partial = target.with_name(target.name + ".partial")
            partials.append((partial, target))
            digest = _write(partial, render_export(testset, kind))
            expected = testset.manifest["files"][kind]["sha256"]
            if digest != expected:
                raise UserError(
                    f"test set {name!r}: {target.name} does not match its manifest (sha256 {digest} != "
                    f"{expected}); the test set was altered after it was built"
                )
    except BaseException:
        for partial, _ in partials:
            partial.unlink(missing_ok=True)
        raise
    for partial, target in partials:
        os.replace(partial, target)
    manifest = out_dir / f"{testset.name}.manifest.json"
    manifest.write_bytes(manifest_bytes(testset))
    return [target for _, target in partials] + [manifest]


def _write(path: Path, chunks) -> str:
    digest = hashlib.sha256()
    with open(path, "wb") as handle:
        for chunk in chunks:
            data = chunk.encode("utf-8")
            digest.update(data)
            handle.write(data)
    return digest.hexdigest()
