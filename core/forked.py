"""Work in a forked child process whose results stream back to the parent, in order.

For CPU-bound Python work beside a database that the parent alone may use (its transaction): the
child gets a copy of the parent's memory (nothing to pickle on the way in), sends what it makes
through a pipe, and its exception, pickled, is raised in the parent. A parent that stops reading
(its own error) ends the child, and a child whose parent died stops at its next send.

The child is forked with ``os.fork`` rather than ``multiprocessing.Process``: a Celery prefork
worker's process is daemonic, and multiprocessing refuses to start children from a daemonic process
("daemonic processes are not allowed to have children"), which would fail a large import on a
worker started with ``--concurrency`` above 1 (docker-compose.yml's).
"""

import gc
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator

_DONE, _ITEM, _ERROR = "done", "item", "error"


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def forked_items(produce: Callable[[Callable[[object], None]], None]) -> Iterator[object]:
    """Run ``produce(send)`` in a forked child; yield each item it sends; raise what it raised."""
    pid, receiver = _fork(produce)
    finished = False
    try:
        while True:
            try:
                kind, value = receiver.recv()
            except EOFError:
                finished = True
                raise _ended_early(pid) from None
            if kind == _ITEM:
                yield value
            elif kind == _ERROR:
                raise value
            else:
                return
    finally:
        receiver.close()
        if not finished:
            _end(pid)


class ForkedCall:
    """``compute()`` started now in a forked child, its value read by ``result()``: the parent goes
    on with its own work (reading the database in its transaction) while the child computes from
    its copy of the parent's memory. ``close()`` (or leaving a ``with`` block) ends a child whose
    value is not wanted."""

    def __init__(self, compute: Callable[[], object]) -> None:
        # No collection of the parent's garbage in the child: a finaliser (a database cursor's)
        # must not run there.
        self._pid, self._receiver = _fork(lambda send: send(compute()), collect_garbage=False)
        self._ended = False

    def result(self) -> object:
        """The child's value (waiting for it), or its exception raised here."""
        try:
            kind, value = self._receiver.recv()
        except EOFError:
            self._ended = True
            self._receiver.close()
            raise _ended_early(self._pid) from None
        finally:
            self.close()
        if kind == _ERROR:
            raise value
        return value

    def __enter__(self) -> "ForkedCall":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        if self._ended:
            return
        self._ended = True
        self._receiver.close()
        _end(self._pid)


def _fork(produce: Callable[[Callable[[object], None]], None], *, collect_garbage: bool = True):
    """A child forked now that runs ``produce(send)`` (_run) and exits: (its pid, this end of its pipe)."""
    receiver, sender = multiprocessing.get_context("fork").Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:  # the child: never returns into the parent's code
        if not collect_garbage:
            gc.disable()
        code = 0
        try:
            receiver.close()
            _run(produce, sender)
        except BaseException:  # noqa: BLE001 - _run reports its own errors; anything else is an exit code
            code = 1
        finally:
            os._exit(code)
    sender.close()
    return pid, receiver


def _ended_early(pid: int) -> RuntimeError:
    return RuntimeError(f"the child process ended before its work (exit code {_wait(pid)})")


def _end(pid: int) -> None:
    """End a child that may still run, and wait for it."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    _wait(pid)


def _wait(pid: int) -> int:
    """The child's exit code once it has ended (negative: the signal that ended it)."""
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


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
