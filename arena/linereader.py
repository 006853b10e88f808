"""Reading lines from one pipe by an absolute deadline, judging lateness by arrival time.

A line counts if it may have arrived by the deadline: it is late only if the pipe was seen empty
at or after the deadline before the line came (a poll that timed out, or a read that drained
it). So a referee that looks late (a loaded machine, another thread holding the GIL) neither
refuses a move that was waiting in the pipe in time nor accepts one that came after the deadline.
A line's time is when it was read, or the deadline for a line found late that may have come in
time (the arena cannot know better, and its own lateness is not charged to the bot).

Two bounds keep a bot from passing late output off as output in time (hostile review: a move
written 1.5 s past a 100 ms limit, stored as in time): a read that itself took over `SLOW_READ_S`
(the bot held its pipe's lock, e.g. with splice(), while it thought) dates what it read, and
all after it, at its end; and past the deadline no more is read as possibly in time than a pipe
can hold, as a bot that keeps refilling a full pipe would otherwise never let it be seen empty.

The clock and the wait are parameters, so tests can play "the arena looks late" exactly.
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path

from arena.boterrors import Aborted, BotTimeout
from arena.linebuffer import Arrival, LineBuffer
from arena.stallwatch import guarded

READ_CHUNK = 64 * 1024
SLOW_READ_S = 0.05  # a pipe read of what is there takes microseconds; longer: the lock was held


def _pipe_max_bytes() -> int:
    """The most a bot's pipe can hold: what an unprivileged process may grow it to. Read from
    /proc once, never from the pipe: F_GETPIPE_SZ takes the pipe's lock, which the bot may hold
    (the review of the diff: the arena slept in it past SIGKILL)."""
    try:
        return max(1 << 20, int(Path("/proc/sys/fs/pipe-max-size").read_text()))
    except (OSError, ValueError):
        return 1 << 20


PIPE_MAX_BYTES = _pipe_max_bytes()


class LineReader:
    def __init__(
        self,
        fd: int,
        cap: int,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[float], bool] | None = None,
        on_stall: Callable[[], None] | None = None,
    ) -> None:
        self.fd = fd
        self.on_stall = on_stall  # ends the writer when a read waits on the pipe (`stallwatch`)
        self.buffer = LineBuffer(cap)
        self.eof = False
        self.clock = clock
        if wait is None:
            poller = select.poll()
            poller.register(fd, select.POLLIN)

            def wait(seconds: float) -> bool:
                # ms, rounded up by poll(): it has waited at least `seconds` when it says no
                return bool(poller.poll(seconds * 1000))

        self._wait = wait
        self.seen_empty_at = float("-inf")  # the last moment the pipe was known to be empty
        self.last_line_at = 0.0
        self.pipe_bytes = PIPE_MAX_BYTES  # the most that can wait in the pipe at a deadline
        self.late_bytes = 0  # read since `_late_for`, a deadline that has passed
        self._late_for: float | None = None

    # --- reading without waiting ----------------------------------------------------------------

    def _read_chunk(self, earliest: float) -> None:
        before = self.clock()
        try:
            chunk = guarded(self.on_stall, os.read, self.fd, READ_CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            self.eof = True
            return
        after = self.clock()
        slow = after - before > SLOW_READ_S  # it waited on the pipe's lock: no telling when
        if slow:  # what it read came
            earliest = after
        self.buffer.feed(chunk, Arrival(earliest, after))
        self.late_bytes += len(chunk)
        if len(chunk) < READ_CHUNK:
            self.seen_empty_at = before  # the read took all there was
        if slow:  # and what follows came no earlier (reads chained under the bound)
            self.seen_empty_at = max(self.seen_empty_at, after)

    def _poll_now(self) -> bool:
        """Readable now? (A no is an observation that the pipe is empty.)"""
        before = self.clock()
        if self._wait(0):
            return True
        self.seen_empty_at = before
        return False

    def read_available(self) -> None:
        """Read what is in the pipe without waiting (bounded by the line cap)."""
        while not self.eof and self.buffer.wants_more() and self._poll_now():
            self._read_chunk(self.seen_empty_at)

    def ready(self) -> bool:
        """True if `read_line` would return or raise at once."""
        self.read_available()
        return self.buffer.has_line() or self.buffer.over_cap() or self.eof

    def pending_lines(self) -> list[str]:
        """Complete lines already sent, without waiting."""
        self.read_available()
        return self.buffer.pending_lines()

    # --- reading by a deadline ------------------------------------------------------------------

    def _take(self, deadline: float) -> str | None:
        line = self.buffer.take_line()
        if line is None:
            return None
        earliest, latest = self.buffer.last_arrival
        if earliest >= deadline:
            raise BotTimeout("no answer in time (it came after the deadline)")
        self.last_line_at = min(latest, deadline)
        return line

    def read_line(
        self,
        deadline: float,
        stop: threading.Event | None = None,
        exited: Callable[[], bool] = lambda: False,
    ) -> str | None:
        """The next line by `deadline` (same clock as `clock`), None at the end of the output.

        `exited()` says whether the writer has exited: then what is in the pipe is read and the
        output ends there, though a grandchild may still hold the pipe open.
        Raises BotTimeout, BotLineTooLong or Aborted.
        """
        while True:
            line = self._take(deadline)
            if line is not None:
                return line
            self.buffer.check_cap()
            if self.eof:
                return None
            now = self.clock()
            remaining = deadline - now
            if remaining <= 0:
                if self._late_for != deadline:  # one count per deadline, over its lines
                    self._late_for, self.late_bytes = deadline, 0
                if self.seen_empty_at >= deadline or not self._poll_now():
                    raise BotTimeout("no answer in time", self.buffer.head())
                if self.late_bytes >= self.pipe_bytes:  # more than was there at the deadline
                    raise BotTimeout("no answer in time (its output kept coming past the "
                                     "deadline)", self.buffer.head())
                self._read_chunk(self.seen_empty_at)  # may have come in time: judged by _take
                continue
            if stop is not None and stop.is_set():
                raise Aborted()
            wait = min(remaining, 0.05) if stop is not None else min(remaining, 0.25)
            wait += 0.0005  # past the deadline when it times out (poll rounds up to ms)
            if self._wait(wait):
                self._read_chunk(self.seen_empty_at)
            else:
                self.seen_empty_at = now + wait  # it waited at least that long
                if exited():
                    self.read_available()
                    self.eof = True
