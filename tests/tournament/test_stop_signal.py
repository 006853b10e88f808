"""A stop signal's handler sets the run's stop event without waiting on the event's lock: a
burst of Ctrl-C ran a handler inside another handler's `Event.set`, which then waited for a lock
its own thread held (a hung `arena run`, found by test_ctrl_c_pressed_again_and_again under
load). No processes: the lock is held as the interrupted code held it."""

from __future__ import annotations

import os
import signal
import threading
import time

from arena.tournament.runner import install_stop_handlers, restore_handlers, set_from_signal_handler


def test_a_handler_inside_the_events_own_lock_returns_and_the_event_is_set_after():
    event = threading.Event()
    with event._cond:  # what a handler interrupted inside Event.set (or wait) holds
        set_from_signal_handler(event)  # Event.set here waited forever
    assert event.wait(5)


def test_the_usual_case_is_set_on_return():
    event = threading.Event()
    set_from_signal_handler(event)
    assert event.is_set()
    set_from_signal_handler(event)  # again: nothing to do
    assert event.is_set()


def test_a_burst_of_signals_stops_without_hanging():
    event = threading.Event()
    seen: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        seen.append(signum)
        set_from_signal_handler(event)

    saved = install_stop_handlers(handler)
    try:
        for _ in range(200):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.0005)
        assert event.wait(5) and seen
    finally:
        restore_handlers(saved)
