import gc

import pytest

from core.gc_pause import gc_paused


def test_the_collector_is_off_inside_and_on_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause goes on
    assert gc.isenabled()


def test_an_error_inside_turns_the_collector_back_on():
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("inside")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_decorated_call_runs_paused():
    @gc_paused()
    def enabled_inside() -> bool:
        return gc.isenabled()

    assert enabled_inside() is False and enabled_inside() is False
    assert gc.isenabled()
