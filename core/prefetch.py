"""An iterator run ahead in a thread, so that its work overlaps the consumer's waits.

An import parses its file (Python, CPU) and writes rows with COPY, waiting for the database to
take each batch; while the consumer waits on the socket (the driver releases the GIL), the next
batch is parsed. The producer must not touch the database: its thread has a connection of its
own, outside the consumer's transaction.
"""

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_END = object()


def prefetched(items: Iterable[T], *, depth: int = 2) -> Iterator[T]:
    """The items of ``items``, up to ``depth`` computed ahead in a thread; an exception of the
    producer is raised in the consumer, at the item where it happened."""
    handoff: queue.Queue = queue.Queue(maxsize=depth)
    stopped = threading.Event()

    def put(entry) -> bool:
        while not stopped.is_set():
            try:
                handoff.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
            put((_END, None))
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, which raises it
            put((_END, error))

    thread = threading.Thread(target=produce, name="prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item, error = handoff.get()
            if error is not None:
                raise error
            if item is _END:
                return
            yield item
    finally:
        stopped.set()
        thread.join()
