"""Models named by a local folder or by their Hugging Face id, resolved to a local folder to load.

A model name is either a folder that exists, or a Hugging Face model id with an optional revision
after ``@`` (a branch, a tag, a commit sha or a pull request's ref): ``gpt2``, ``org/name``,
``org/name@v1.0``, ``org/name@refs/pr/3``. A folder wins when both could be meant (write
``./gpt2`` to be plain). A hub id goes through huggingface_hub's ``snapshot_download``, so its
cache (``HF_HOME``, ``HF_HUB_CACHE``), ``HF_HUB_OFFLINE``, ``HF_TOKEN`` and ``HF_ENDPOINT`` apply
as in every Hugging Face tool, and a model in the cache is found without the network.

Only configuration, tokenizer and safetensors files are fetched: pickled weights (``*.bin``,
``*.pt``) can run code when they are loaded, and a repository without safetensors weights is
refused. A local folder with pickled weights and no safetensors ones is refused too, naming the
file, and every model is loaded with ``use_safetensors=True``, so pickled weights are never read.
The commit a name resolved to is returned, for whoever records which weights were used.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from core.errors import UserError

REVISION_SEPARATOR = "@"
# Configuration, generation configuration and tokenizer files (JSON, BPE merges and WordPiece
# vocabularies, SentencePiece and tiktoken models, chat templates), the safetensors index included.
METADATA_PATTERNS = ["*.json", "*.txt", "*.model", "*.tiktoken", "*.jinja"]
# What transformers' save_pretrained writes: one file, or numbered shards named in the index. Other
# safetensors files (another framework's consolidated copy) are not fetched twice over.
WEIGHT_PATTERNS = ["model.safetensors", "model-*-of-*.safetensors"]
# Weights in Python's pickle format (torch.save and its kin), which can run code when unpickled.
PICKLE_WEIGHT_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
_PART = r"\w(?:[\w.-]*\w)?"
_REPO_ID = re.compile(rf"(?:{_PART}/)?{_PART}", re.ASCII)
NAME_SYNTAX = "a local folder, or a Hugging Face model id such as gpt2 or org/name, optionally @revision"


@dataclass(frozen=True)
class HubName:
    """A Hugging Face model id and the revision asked for (None: the default branch)."""

    repo_id: str
    revision: str | None = None

    def __str__(self) -> str:
        return f"{self.repo_id}{REVISION_SEPARATOR}{self.revision}" if self.revision else self.repo_id


@dataclass(frozen=True)
class ResolvedModel:
    """Where a named model's files are, and for a hub model the repository and commit they come from."""

    path: str
    repo_id: str = ""  # empty: a local folder
    revision_sha: str = ""

    @property
    def from_hub(self) -> bool:
        return bool(self.repo_id)

    @property
    def version(self) -> str:
        """``repo@commit`` for a hub model (the exact weights), the folder otherwise."""
        return f"{self.repo_id}{REVISION_SEPARATOR}{self.revision_sha}" if self.from_hub else self.path

    def load_kwargs(self) -> dict:
        """``from_pretrained``'s keywords: the files are here, so nothing is downloaded there, and the
        weights come from safetensors only (pickled ones beside them are never unpickled)."""
        return {"local_files_only": True, "use_safetensors": True}


def model_name_check(*, name: str, setting: str) -> HubName | None:
    """The hub id and revision ``name`` spells, or None when it names an existing folder; a UserError
    for anything else (a missing folder, ``id@``). What a form checks before a job resolves the name
    (which may download)."""
    name = name.strip()
    if not name:
        raise UserError(f"{setting}: no model given ({NAME_SYNTAX})")
    if Path(name).expanduser().is_dir():
        return None
    repo_id, separator, revision = name.partition(REVISION_SEPARATOR)
    if separator and not revision.strip():
        raise UserError(f"{setting}: {name!r} names no revision after {REVISION_SEPARATOR!r} ({NAME_SYNTAX})")
    if not _is_repo_id(repo_id):  # a path (/models/x, ./x, ~/x) or nothing a model id can be
        raise UserError(f"{setting}: {name!r} is no local directory and no Hugging Face model id ({NAME_SYNTAX})")
    return HubName(repo_id=repo_id, revision=revision.strip() or None)


def model_resolve(*, name: str, setting: str, revision: str | None = None, weights: bool = True) -> ResolvedModel:
    """The local folder of the model ``name`` (a folder, or a hub id fetched into the Hugging Face
    cache), for ``setting`` (the option or setting it came from, named in every error). ``revision``
    overrides the one in the name (a commit recorded earlier pins the same weights again); without
    ``weights`` only the configuration and tokenizer files are fetched. A UserError, naming the model
    and what to do, for every model that cannot be had."""
    hub = model_name_check(name=name, setting=setting)
    if hub is None:
        resolved = ResolvedModel(path=str(Path(name.strip()).expanduser().resolve()))
        if weights:
            pickled_weights_check(folder=Path(resolved.path), setting=setting)
        return resolved
    if revision:
        hub = HubName(repo_id=hub.repo_id, revision=revision)
    folder = Path(_snapshot(hub, setting=setting, weights=weights))
    resolved = ResolvedModel(path=str(folder), repo_id=hub.repo_id, revision_sha=folder.name)
    if not (folder / "config.json").is_file():
        raise UserError(
            f"{setting}: the Hugging Face model {resolved.version} has no config.json (not a transformers model)"
        )
    if weights and not any(folder.glob("model*.safetensors")):
        raise UserError(
            f"{setting}: the Hugging Face model {resolved.version} has no safetensors weights (model.safetensors); "
            "pickled weights (*.bin, *.pt) are never loaded. Name a revision that has them (often a pull request "
            f"that converted them: {hub.repo_id}{REVISION_SEPARATOR}refs/pr/N), or convert them into a local folder."
        )
    return resolved


def pickled_weights_check(*, folder: Path, setting: str) -> None:
    """A UserError, naming the file, when ``folder`` holds pickled weights and no safetensors weights:
    loading safetensors only, it could not be loaded, and unpickling it could run any code."""
    if any(folder.glob("*.safetensors")):
        return
    pickled = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name.endswith(PICKLE_WEIGHT_SUFFIXES))
    if pickled:
        raise UserError(
            f"{setting}: {folder} holds pickled weights ({', '.join(pickled[:3])}) and no safetensors weights; "
            "pickled weights can run code when they are loaded, so only safetensors weights are loaded. Convert them "
            "where you trust the file: model.save_pretrained(folder, safe_serialization=True) writes model.safetensors."
        )


def _is_repo_id(text: str) -> bool:
    """huggingface_hub's rule (validate_repo_id), here so that a web process without the model stack
    can check a name: ``name`` or ``namespace/name`` of word characters, ``-`` and ``.``, each part
    starting and ending with a word character, no ``--`` or ``..``, not ending in ``.git``, 96 at most."""
    return (
        _REPO_ID.fullmatch(text) is not None
        and len(text) <= 96
        and "--" not in text
        and ".." not in text
        and not text.endswith(".git")
    )


def _snapshot(hub: HubName, *, setting: str, weights: bool) -> str:
    """snapshot_download of the allowed files, its errors as UserErrors."""
    try:
        from huggingface_hub import constants, snapshot_download
    except ImportError:
        raise UserError(
            f"{setting} {hub}: a Hugging Face model needs huggingface_hub, which comes with the model stack "
            "(pip install '.[ml]')"
        ) from None
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    fetch = f"hf download {hub.repo_id}" + (f" --revision {hub.revision}" if hub.revision else "")
    where = f"{setting} {hub}"
    try:
        return snapshot_download(
            hub.repo_id,
            revision=hub.revision,
            allow_patterns=METADATA_PATTERNS + (WEIGHT_PATTERNS if weights else []),
            local_files_only=constants.HF_HUB_OFFLINE,
        )
    except GatedRepoError:
        raise UserError(f"{where}: the model is gated; accept its terms on the hub and set HF_TOKEN") from None
    except RepositoryNotFoundError:
        raise UserError(
            f"{where}: no such Hugging Face model at {constants.ENDPOINT} and no local directory of that name "
            "(a private model needs HF_TOKEN)"
        ) from None
    except RevisionNotFoundError:
        raise UserError(f"{where}: the Hugging Face model {hub.repo_id} has no revision {hub.revision!r}") from None
    except LocalEntryNotFoundError as exc:
        if constants.HF_HUB_OFFLINE:
            reason, remedy = "HF_HUB_OFFLINE=1 forbids downloading it", "run without HF_HUB_OFFLINE=1 where it can"
        else:
            reason = f"the hub at {constants.ENDPOINT} cannot be reached ({_first_line(exc.__cause__ or exc)})"
            remedy = "check the network and HF_ENDPOINT"
        raise UserError(
            f"{where}: the model is not (completely) in the Hugging Face cache {constants.HF_HUB_CACHE}, and {reason}. "
            f"Fetch it with `{fetch}` where the hub can be reached (into the same HF_HOME or HF_HUB_CACHE), "
            f"{remedy}, or name a local folder."
        ) from None
    except HfHubHTTPError as exc:
        raise UserError(f"{where}: the hub at {constants.ENDPOINT} refused it ({_first_line(exc)})") from None
    except OSError as exc:  # the cache cannot be written: a read-only or full disk, no permission
        raise UserError(f"{where}: cannot write the Hugging Face cache {constants.HF_HUB_CACHE} ({exc})") from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
