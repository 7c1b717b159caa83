"""Systems -> scorers. A worker process loads each system's model once and keeps it."""

import logging
import threading

logger = logging.getLogger(__name__)


class ScorerCache:
    """The scorers this process has loaded, one per system and device, each valid for the system's
    ``updated_at`` it was built at: an edited system loads again, its older scorers are dropped."""

    def __init__(self) -> None:
        self._scorers: dict[tuple[int, object, str | None], object] = {}
        self._lock = threading.Lock()

    def get_or_build(self, system, *, device: str | None, build) -> object:
        key = (system.pk, system.updated_at, device)
        with self._lock:
            scorer = self._scorers.get(key)
            if scorer is None:
                for stale in [k for k in self._scorers if k[0] == system.pk]:
                    del self._scorers[stale]
                scorer = self._scorers[key] = build()
                logger.info("loaded system %s", system.name)
            return scorer

    def clear(self) -> None:
        with self._lock:
            self._scorers.clear()


SCORERS = ScorerCache()


def scorer_for(system, *, device: str | None = None):
    """The scorer of a System from its backend, cached per process by (system id, updated_at, device)."""
    from .backends import backend_for

    backend = backend_for(system)
    return SCORERS.get_or_build(system, device=device, build=lambda: backend.scorer(system, device=device))


def scorer_cache_clear() -> None:
    SCORERS.clear()
