"""The run's masked LM, loaded once per worker process: a sharded job's shards (and later jobs)
on one worker reuse it, as evaluation's scorers are reused (evaluation.scoring.loading)."""

import logging
import threading
from pathlib import Path

from negatives.demo_mlm import mlm_default
from negatives.mlm import MaskedLM, mlm_resolve

logger = logging.getLogger(__name__)
_cache: dict[tuple, MaskedLM] = {}
_lock = threading.Lock()


def mlm_load(*, path: str = "", device: str | None = None) -> MaskedLM:
    """The masked LM ``path`` (a folder or a Hugging Face id), or the default one when it is empty
    (WELLCHOSEN_MLM_MODEL, else the demo's: negatives.demo_mlm); cached per process by the folder it
    resolved to, the device and the folder's files (a checkpoint replaced in place reloads; a hub
    branch that moved on resolves to a new folder)."""
    name, setting = (path, "--mlm") if path else mlm_default()
    resolved = mlm_resolve(name=name, setting=setting)
    key = (resolved.path, device, _files_signature(resolved.path))
    with _lock:
        mlm = _cache.get(key)
        if mlm is None:
            for stale in [k for k in _cache if k[:2] == key[:2]]:
                del _cache[stale]
            mlm = MaskedLM.from_resolved(resolved, setting=setting, device=device)
            _cache[key] = mlm
            logger.info("loaded masked LM %s", mlm.version)
        return mlm


def mlm_cache_clear() -> None:
    with _lock:
        _cache.clear()


def _files_signature(folder: str) -> tuple:
    """Name, size and modification time of each file in ``folder`` (empty when it is not one)."""
    path = Path(folder) if folder else None
    if path is None or not path.is_dir():
        return ()
    return tuple(sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in path.iterdir() if p.is_file()))
