"""A bound on every read and write the arena makes on a bot's pipes.

Reading or writing a pipe takes the pipe's lock, and a bot can hold that lock as long as it
likes: `splice()` from an empty socket into its stdout waits with its stdout's lock held. The
arena's `read()` then sleeps in the kernel, uninterruptibly: no deadline, no signal, not even
SIGKILL of the arena ends it until the bot lets go (hostile review). Only ending the bot does:
its waiting `splice()` is interruptible, and the lock goes with it.

So each read and write of a bot's pipe is registered here while it runs, and a watchdog thread
kills the bot of any that lasts over `STALL_S` (a pipe read or write of what is there takes
microseconds; the margin is for a loaded machine's scheduling, never for the bot's thinking).
Cheap on the hot path: two dict operations per call, and one thread per arena process that
wakes a few times a second.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

STALL_S = 2.0  # a read or write of a bot's pipe that takes longer: the bot is holding its lock
PERIOD_S = 0.1  # how often the watchdog looks


class StallWatch:
    """The reads and writes under way, with the kill of the bot each belongs to."""

    def __init__(self, limit_s: float = STALL_S, period_s: float = PERIOD_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit_s = limit_s
        self.period_s = period_s
        self.clock = clock
        self._active: dict[int, tuple[float, Callable[[], None]]] = {}
        self._keys = itertools.count()
        self._lock = threading.Lock()
        self._running = False  # its watchdog thread (none in a forked child: after_fork_in_child)

    def begin(self, kill: Callable[[], None]) -> int:
        """Register a read or write about to start; `kill` ends its bot. Returns its key."""
        if not self._running:
            self._start()
        key = next(self._keys)
        self._active[key] = (self.clock(), kill)
        return key

    def end(self, key: int) -> None:
        self._active.pop(key, None)

    def overdue(self) -> list[Callable[[], None]]:
        """The kills of the calls that have lasted over the limit (each taken once)."""
        now = self.clock()
        late = [key for key, (since, _) in list(self._active.items())
                if now - since > self.limit_s]
        return [entry[1] for key in late if (entry := self._active.pop(key, None)) is not None]

    def after_fork_in_child(self) -> None:
        """A forked child has none of the parent's threads: no watchdog, none of their calls,
        and a lock a parent's thread may have held at the fork."""
        self._lock = threading.Lock()
        self._active.clear()
        self._running = False

    def _start(self) -> None:
        with self._lock:
            if self._running:
                return
            threading.Thread(target=self._run, name="pipe-stall-watch", daemon=True).start()
            self._running = True

    def _run(self) -> None:
        while True:
            time.sleep(self.period_s)
            for kill in self.overdue():
                try:
                    kill()
                except Exception:  # the watchdog must outlive any one bot
                    pass


WATCH = StallWatch()
os.register_at_fork(after_in_child=WATCH.after_fork_in_child)


def guarded(on_stall: Callable[[], None] | None, call: Callable[..., T], *args: object) -> T:
    """`call(*args)` (a read or write of a bot's pipe) watched by `WATCH`: `on_stall` ends the
    bot if it lasts over the limit. Unwatched without an `on_stall`."""
    if on_stall is None:
        return call(*args)
    key = WATCH.begin(on_stall)
    try:
        return call(*args)
    finally:
        WATCH.end(key)
