"""core.prefetch: an iterator computed ahead in a thread gives the same items, raises its errors
where they happened and stops when the consumer does."""

import threading

import pytest

from core.prefetch import prefetched


def test_the_items_come_in_order():
    assert list(prefetched(iter(range(1000)), depth=3)) == list(range(1000))


def test_an_error_of_the_producer_is_raised_after_the_items_before_it():
    def items():
        yield 1
        yield 2
        raise ValueError("line 3: bad field")

    seen = []
    with pytest.raises(ValueError, match="line 3: bad field"):
        for item in prefetched(items()):
            seen.append(item)
    assert seen == [1, 2]


def test_a_consumer_that_stops_early_stops_the_producer():
    produced = []

    def items():
        for i in range(10_000):
            produced.append(i)
            yield i

    stream = prefetched(items(), depth=2)
    assert next(stream) == 0
    stream.close()
    assert not any(t.name == "prefetch" and t.is_alive() for t in threading.enumerate())
    assert len(produced) <= 5  # the item taken, the ones queued and the one being put


def test_the_work_runs_in_another_thread():
    def items():
        yield threading.current_thread().name

    assert list(prefetched(items())) == ["prefetch"]
