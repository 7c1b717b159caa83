"""What a Hugging Face test set folder says about its data file: where it is (the dataset card's
test split, else data/test.jsonl) and which sha256 its manifest.json lists for it."""

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from core.errors import ImportFileError, UserError

DEFAULT_DATA_FILES = ("data/test.jsonl", "data/test.jsonl.gz")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")
MAX_CARD_BYTES = 1 << 20
MAX_MANIFEST_BYTES = 16 << 20
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class HFFolder:
    folder: Path
    data_file: str  # relative to the folder, with "/" separators
    manifest: dict  # empty when the folder has no manifest.json
    expected_sha256: str | None  # the data file's sha256 as the manifest lists it

    @property
    def data_path(self) -> Path:
        return self.folder / self.data_file


def hf_folder_read(folder: Path) -> HFFolder:
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"{folder} is not a folder (a Hugging Face test set folder holds data/test.jsonl)")
    manifest = _manifest(folder / "manifest.json")
    data_file = _card_data_file(folder) or next((f for f in DEFAULT_DATA_FILES if (folder / f).is_file()), None)
    if data_file is None:
        raise UserError(f"{folder} has no {DEFAULT_DATA_FILES[0]} (nor a test split in its README.md card)")
    return HFFolder(folder, data_file, manifest, _listed_sha256(manifest, data_file, path=folder / "manifest.json"))


def sha256_check(hf: HFFolder) -> str:
    """The data file's sha256; a mismatch with the manifest is an error (the file was changed)."""
    digest = hashlib.sha256()
    with open(hf.data_path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    actual = digest.hexdigest()
    if hf.expected_sha256 is not None and actual != hf.expected_sha256:
        raise ImportFileError(
            hf.data_path,
            None,
            None,
            f"its sha256 is {actual} but manifest.json lists {hf.expected_sha256}: the file was changed or cut "
            "after it was exported; nothing was imported",
        )
    return actual


def release_name(hf: HFFolder) -> str:
    """The release's name as its manifest gives it, else the folder's name."""
    name = hf.manifest.get("name")
    return name if isinstance(name, str) and name else hf.folder.resolve().name


def _manifest(path: Path) -> dict:
    if not path.is_file():
        return {}
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise ImportFileError(path, None, None, f"is larger than {MAX_MANIFEST_BYTES:,} bytes")
    try:
        manifest = json.loads(path.read_bytes())
    except (UnicodeDecodeError, ValueError) as exc:
        raise ImportFileError(path, None, None, f"is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(manifest, dict):
        raise ImportFileError(path, None, None, "must be a JSON object")
    return manifest


def _listed_sha256(manifest: dict, data_file: str, *, path: Path) -> str | None:
    """The sha256 the manifest's "files" lists for ``data_file``. Entries may be keyed by the
    file's path or by a kind naming it ({"kind": {"name"|"path": ..., "sha256": ...}}), or be a list
    of such objects."""
    files = manifest.get("files")
    if isinstance(files, dict):
        entries = [(key, entry) for key, entry in files.items()]
    elif isinstance(files, list):
        entries = [(None, entry) for entry in files]
    else:
        return None
    for key, entry in entries:
        if isinstance(entry, str) and key == data_file:
            value = entry
        elif isinstance(entry, dict) and data_file in (key, entry.get("name"), entry.get("path")):
            value = entry.get("sha256")
        else:
            continue
        if not isinstance(value, str) or not _SHA256.fullmatch(value.lower()):
            raise ImportFileError(path, None, "files", f"the sha256 of {data_file} is not 64 hex digits: {value!r:.80}")
        return value.lower()
    return None


def _card_data_file(folder: Path) -> str | None:
    """The JSON-lines file of the test split in the YAML header of README.md, if it names one."""
    card = folder / "README.md"
    if not card.is_file() or card.stat().st_size > MAX_CARD_BYTES:
        return None
    text = card.read_text(encoding="utf-8", errors="replace")
    match = re.match(r"---\r?\n(.*?)\r?\n---\r?\n", text, re.DOTALL)
    if not match:
        return None
    try:
        header = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise ImportFileError(card, None, "configs", f"its YAML header cannot be read: {str(exc)[:200]}") from None
    configs = header.get("configs") if isinstance(header, dict) else None
    if not isinstance(configs, list):
        return None
    configs = [c for c in configs if isinstance(c, dict)]
    config = next((c for c in configs if c.get("config_name") == "default"), configs[0] if configs else None)
    paths = _test_split_paths(config.get("data_files") if config else None)
    jsonl = [p for p in paths if isinstance(p, str) and p.endswith(JSONL_SUFFIXES)]
    if len(jsonl) != 1 or any(ch in jsonl[0] for ch in "*?["):
        return None  # parquet only, several files or a pattern: the default file is read instead
    return _inside(folder, jsonl[0], card=card)


def _test_split_paths(data_files) -> list:
    if isinstance(data_files, dict):  # {"test": path or [paths]}
        found = data_files.get("test")
    elif isinstance(data_files, list):  # [{"split": "test", "path": path or [paths]}]
        found = next((d.get("path") for d in data_files if isinstance(d, dict) and d.get("split") == "test"), None)
    else:
        return []
    return found if isinstance(found, list) else [found]


def _inside(folder: Path, relative: str, *, card: Path) -> str:
    """``relative`` if it names a file inside ``folder``; a card may not point elsewhere."""
    pure = PurePosixPath(relative)
    target = folder / pure
    if pure.is_absolute() or "\\" in relative or not target.resolve().is_relative_to(folder.resolve()):
        raise ImportFileError(
            card, None, "configs", f"the test split's path {relative!r:.200} is not a file inside the folder"
        )
    if not target.is_file():
        raise ImportFileError(card, None, "configs", f"the test split's file {relative!r:.200} does not exist")
    return str(pure)
