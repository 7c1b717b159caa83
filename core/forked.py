"""Work in a forked child process whose results stream back to the parent, in order.

For CPU-bound Python work beside a database that the parent alone may use (its transaction): the
child gets a copy of the parent's memory (nothing to pickle on the way in), sends what it makes
through a pipe, and its exception, pickled, is raised in the parent. A parent that stops reading
(its own error) ends the child, and a child whose parent died stops at its next send.
"""

import multiprocessing
from collections.abc import Callable, Iterator

_DONE, _ITEM, _ERROR = "done", "item", "error"


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def forked_items(produce: Callable[[Callable[[object], None]], None]) -> Iterator[object]:
    """Run ``produce(send)`` in a forked child; yield each item it sends; raise what it raised."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_run, args=(produce, sender), name="forked-items", daemon=True)
    child.start()
    sender.close()
    try:
        while True:
            try:
                kind, value = receiver.recv()
            except EOFError:
                child.join()
                raise RuntimeError(f"the child process ended before its work (exit code {child.exitcode})") from None
            if kind == _ITEM:
                yield value
            elif kind == _ERROR:
                raise value
            else:
                return
    finally:
        receiver.close()
        if child.is_alive():
            child.terminate()
        child.join()


def _run(produce: Callable[[Callable[[object], None]], None], sender) -> None:
    try:
        produce(lambda item: sender.send((_ITEM, item)))
        sender.send((_DONE, None))
    except BaseException as error:  # noqa: BLE001 - raised again in the parent
        try:
            sender.send((_ERROR, error))
        except Exception:  # the parent is gone, or the error does not pickle
            try:
                sender.send((_ERROR, RuntimeError(f"{type(error).__name__}: {error}")))
            except Exception:  # noqa: BLE001 - nobody is listening any more
                pass
    finally:
        sender.close()
