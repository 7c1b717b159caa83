"""export_testset --format hf: a release written as one self-contained Hugging Face dataset folder.

data/test.jsonl and data/test.parquet (one record per question), README.md (the dataset card),
croissant.json, lm_eval/wellchosen_<release>.yaml and manifest.json (the sha256 of every other
file). Every file is a pure function of the frozen release and its license, so exporting twice
gives the same bytes; the zip the admin offers fixes its entries' dates for the same reason.
"""

import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

from core.errors import UserError
from testsets.models import TestSet

from ..base import recorded_version
from ..jsonl import JSONL_FILE
from .card import render_card
from .croissant import render_croissant
from .facts import release_facts
from .lm_eval_task import DATA_FILE, lm_eval_task_path, render_lm_eval_task
from .records import render_hf_jsonl, render_hf_parquet

MANIFEST = "manifest.json"
# A zip entry's date: the earliest a zip can hold, so that the archive's bytes do not depend on when.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def hf_folder_files(testset: TestSet) -> dict[str, bytes]:
    """Path in the folder -> bytes, the manifest last."""
    _check_unaltered(testset)
    facts = release_facts(testset)
    jsonl = render_hf_jsonl(facts.records)
    files = {
        DATA_FILE: jsonl,
        "data/test.parquet": render_hf_parquet(facts.records),
        "README.md": render_card(facts, jsonl_bytes=len(jsonl)),
        "croissant.json": render_croissant(facts, jsonl_sha256=_sha256(jsonl)),
        lm_eval_task_path(testset): render_lm_eval_task(testset),
    }
    manifest = {
        "release": testset.name,
        "files": {path: {"sha256": _sha256(data), "bytes": len(data)} for path, data in sorted(files.items())},
        # the release's own manifest: counts, rules, agreement, sha256 of its TSV/JSONL/CSV exports
        "release_manifest": testset.manifest,
    }
    files[MANIFEST] = (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    return files


def hf_folder_write(*, testset: TestSet, out_dir: Path) -> list[Path]:
    """Write the folder into ``out_dir``. Files are written beside their targets and moved into
    place only when all are written, so a failed export leaves no half-written folder."""
    files = hf_folder_files(testset)
    out_dir = Path(out_dir)
    moves = []
    try:
        for relative, data in files.items():
            target = out_dir / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".partial")
            moves.append((partial, target))
            partial.write_bytes(data)
    except BaseException:
        for partial, _ in moves:
            partial.unlink(missing_ok=True)
        raise
    for partial, target in moves:
        os.replace(partial, target)
    return [target for _, target in moves]


def hf_folder_zip(testset: TestSet) -> bytes:
    """The folder as a zip whose root is the dataset folder (README.md at the top), so that the
    folder it unzips into, whatever the tool names it, loads with ``datasets.load_dataset``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for relative, data in hf_folder_files(testset).items():
            entry = zipfile.ZipInfo(relative, date_time=ZIP_DATE)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, data)
    return buffer.getvalue()


def _check_unaltered(testset: TestSet) -> None:
    """The release's JSONL export still has the sha256 its manifest recorded at build time: the
    folder is made of the same rows."""
    expected = testset.manifest.get("files", {}).get("jsonl", {}).get("sha256")
    digest = hashlib.sha256()
    for chunk in JSONL_FILE.rendered(testset, version=recorded_version(testset, JSONL_FILE.kind)):
        digest.update(chunk.encode("utf-8"))
    if digest.hexdigest() != expected:
        raise UserError(
            f"test set {testset.name!r} does not match its manifest (JSONL sha256 {digest.hexdigest()} != "
            f"{expected}); the test set was altered after it was built"
        )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
