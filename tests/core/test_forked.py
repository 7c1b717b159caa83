import os
import time

import pytest

from core.errors import ImportFileError
from core.forked import ForkedCall, fork_available, forked_items

pytestmark = pytest.mark.skipif(not fork_available(), reason="needs fork")


def produce_squares(send):
    for i in range(5):
        send((os.getpid(), i * i))


def test_items_come_back_in_order_from_another_process():
    items = list(forked_items(produce_squares))
    assert [square for _, square in items] == [0, 1, 4, 9, 16]
    assert {pid for pid, _ in items} != {os.getpid()}


def test_the_childs_error_is_raised_in_the_parent_as_it_was():
    def produce(send):
        send(1)
        raise ImportFileError("corpus.txt", 7, "text", "undecodable bytes")

    items = forked_items(produce)
    assert next(items) == 1
    with pytest.raises(ImportFileError) as raised:
        next(items)
    assert (raised.value.line, raised.value.field, raised.value.message) == (7, "text", "undecodable bytes")


def test_a_child_that_dies_is_an_error_not_a_hang():
    def produce(send):
        send(1)
        os._exit(3)

    with pytest.raises(RuntimeError, match="exit code 3"):
        list(forked_items(produce))


def test_a_parent_that_stops_reading_ends_the_child():
    def produce(send):
        while True:
            send(b"x" * 10_000)

    items = forked_items(produce)
    next(items)
    items.close()  # the finally block terminates and joins the child: close returns


def _items_in_a_pool_worker(_) -> list:
    return [square for _, square in forked_items(produce_squares)]


def test_a_celery_prefork_worker_process_forks_its_child_too():
    # Celery's prefork pool (billiard) runs tasks in daemonic processes, from which
    # multiprocessing.Process refuses to start a child
    import billiard

    with billiard.Pool(1) as pool:
        assert pool.map(_items_in_a_pool_worker, [0]) == [[0, 1, 4, 9, 16]]


def test_a_forked_call_gives_the_childs_value():
    parent = os.getpid()
    call = ForkedCall(lambda: (os.getpid() != parent, [i * i for i in range(5)]))
    assert call.result() == (True, [0, 1, 4, 9, 16])


def test_a_forked_call_raises_the_childs_error_here():
    def broken():
        raise ValueError("in the child")

    call = ForkedCall(broken)
    with pytest.raises(ValueError, match="in the child"):
        call.result()
    with pytest.raises(ChildProcessError):  # ended and waited for
        os.waitpid(call._pid, os.WNOHANG)


def test_a_child_that_dies_is_an_error_here():
    call = ForkedCall(lambda: os._exit(3))
    with pytest.raises(RuntimeError, match="exit code"):
        call.result()


def test_closing_a_forked_call_ends_its_child():
    call = ForkedCall(lambda: time.sleep(60))
    call.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(call._pid, os.WNOHANG)


def test_an_error_inside_a_forked_calls_block_ends_its_child():
    with pytest.raises(ValueError, match="here"):
        with ForkedCall(lambda: time.sleep(60)) as call:
            raise ValueError("here")
    with pytest.raises(ChildProcessError):
        os.waitpid(call._pid, os.WNOHANG)
