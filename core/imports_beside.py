"""Importing heavy modules in a thread while the calling thread waits on the database.

A test-set build spends seconds waiting on PostgreSQL (its aggregations and writes run in the
server, on another core), and its last step, the manifest's shortcut audit, starts by importing
scikit-learn and SciPy (2.3 s of one core on a 2-vCPU EPYC). Imported in a thread during those
waits, they cost the build nothing; the audit then finds them loaded. The thread only imports:
an import that fails is left for the code that needs the module, which raises it there.

Nothing may fork (core.forked) while the thread may hold the import lock, which a forked child
would inherit held: the caller joins the thread (``importing.join()``) before it forks, and the
``with`` block's end joins it in any case.
"""

import importlib
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

logger = logging.getLogger(__name__)


@contextmanager
def modules_imported_beside(modules: Sequence[str]) -> Iterator[threading.Thread]:
    """Import ``modules`` in a thread (yielded) while the block runs; the block's end waits for it."""
    thread = threading.Thread(target=_import_all, args=(tuple(modules),), name="imports-beside", daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        thread.join()


def _import_all(modules: tuple[str, ...]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - the code that needs the module raises it there
            logger.debug("importing %s beside the caller failed: %s", name, exc)
