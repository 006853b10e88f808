"""Lateness judged by arrival, not by when the arena looks: a LineReader on a plain pipe with a
simulated clock (no processes)."""

from __future__ import annotations

import os
import select

import pytest

from arena.boterrors import BotTimeout
from arena.linereader import LineReader


class Scene:
    """A pipe, a clock the test moves, and a wait that can deliver bytes while it waits."""

    def __init__(self) -> None:
        self.r, self.w = os.pipe()
        self.now = 100.0
        self.during_wait: list[tuple[bool, bytes, float]] = []  # (returns, bytes written, dt)

    def clock(self) -> float:
        return self.now

    def wait(self, seconds: float) -> bool:
        if seconds == 0:
            return self._readable()
        ready, data, elapsed = self.during_wait.pop(0)
        if data:
            os.write(self.w, data)
        self.now += elapsed if elapsed else seconds
        return ready

    def _readable(self) -> bool:
        return bool(select.select([self.r], [], [], 0)[0])

    def reader(self) -> LineReader:
        return LineReader(self.r, 1000, clock=self.clock, wait=self.wait)

    def close(self) -> None:
        os.close(self.r)
        os.close(self.w)


@pytest.fixture
def scene():
    s = Scene()
    yield s
    s.close()


def test_move_waiting_in_the_pipe_when_the_arena_looks_late_counts(scene):
    reader = scene.reader()
    reader.pending_lines()  # the arena looked at t=100: nothing there
    os.write(scene.w, b"move d4\n")  # the bot answers in time...
    scene.now = 101.5  # ...but the arena only looks after the deadline (busy, loaded machine)
    assert reader.read_line(deadline=101.0) == "move d4"
    assert reader.last_line_at == 101.0  # not charged for the arena's own lateness


def test_move_that_came_after_the_deadline_is_refused_though_found_in_the_pipe(scene):
    reader = scene.reader()
    # The arena waits until the deadline and sees nothing; the move lands just after, before
    # the arena's next look (the check that used to accept anything in the pipe by then).
    scene.during_wait.append((False, b"move d4\n", 0.0))
    with pytest.raises(BotTimeout, match="no answer in time"):
        reader.read_line(deadline=100.2)
    assert scene._readable()  # the late move was there, and was not taken


def test_move_in_time_with_a_late_wakeup_counts_with_its_time_capped(scene):
    reader = scene.reader()
    reader.pending_lines()
    # the move arrives during the wait, the arena thread runs again only 0.3 s after the deadline
    scene.during_wait.append((True, b"info x\nmove d4\n", 0.5))
    assert reader.read_line(deadline=100.2) == "info x"
    assert reader.read_line(deadline=100.2) == "move d4"
    assert reader.last_line_at == 100.2


def test_line_completed_after_the_deadline_is_late(scene):
    reader = scene.reader()
    scene.during_wait.append((True, b"move ", 0.05))  # half a line in time
    scene.during_wait.append((False, b"d4\n", 0.0))  # then nothing until the deadline...
    with pytest.raises(BotTimeout):
        reader.read_line(deadline=100.2)


def test_in_time_lines_are_timed_by_their_read(scene):
    reader = scene.reader()
    scene.during_wait.append((True, b"move d4\n", 0.04))
    assert reader.read_line(deadline=101.0) == "move d4"
    assert reader.last_line_at == pytest.approx(100.04)


def test_end_of_output_and_an_exited_writer(scene):
    reader = scene.reader()
    os.write(scene.w, b"partial")
    scene.during_wait.append((False, b"", 0.05))
    assert reader.read_line(deadline=101.0, exited=lambda: True) is None
    assert reader.buffer.head() == b"partial"


def test_a_read_that_waited_on_the_pipes_lock_dates_its_data_at_its_end():
    """A bot that holds its stdout pipe's lock (splice() from an empty socket) while it thinks
    makes the arena's read wait in the kernel; what that read brings may have been written
    long after the deadline, and was taken as in time (hostile review): dated at the read's
    end, it is late. A quick read of the same bytes is not."""
    for read_took, late in ((0.9, True), (0.06, True), (0.001, False)):
        r, w = os.pipe()
        try:
            os.write(w, b"move d4\n")
            times = iter([100.95, 100.95 + read_took])  # before and after the read
            reader = LineReader(r, 1000, clock=times.__next__, wait=lambda s: True)
            reader._read_chunk(reader.seen_empty_at)
            if late:
                with pytest.raises(BotTimeout, match="after the deadline"):
                    reader._take(deadline=101.0)
                # nor can what a quick read brings next be older: slow reads do not chain
                os.write(w, b"move d5\n")
                reader.clock = iter([101.02, 101.0201]).__next__
                reader._read_chunk(reader.seen_empty_at)
                with pytest.raises(BotTimeout, match="after the deadline"):
                    reader._take(deadline=101.0)
            else:
                assert reader._take(deadline=101.0) == "move d4"
        finally:
            os.close(r)
            os.close(w)


def test_output_that_keeps_coming_past_the_deadline_is_not_read_as_in_time(scene):
    """A bot that tops up its full stdout pipe faster than the arena drains it was never seen
    with an empty pipe, and its move, written seconds late, counted (hostile review): past the
    deadline no more is read as possibly in time than the pipe can hold."""
    import fcntl

    fcntl.fcntl(scene.w, 1031, 1 << 17)  # F_SETPIPE_SZ: 128 KiB, two of the arena's reads
    capacity = fcntl.fcntl(scene.r, 1032)
    os.set_blocking(scene.w, False)
    line = b"info " + b"x" * 200 + b"\n"

    def topping_up(seconds: float) -> bool:  # the bot keeps its pipe full, past the deadline
        try:
            while True:
                os.write(scene.w, line)
        except BlockingIOError:
            pass
        scene.now += seconds
        return True

    reader = LineReader(scene.r, 1000, clock=scene.clock, wait=topping_up)
    assert reader.pipe_bytes >= 1 << 20  # the most a bot can make its pipe hold
    reader.pipe_bytes = capacity  # this pipe's: never asked of the pipe (F_GETPIPE_SZ takes
    scene.now = 102.0  # the lock a bot may hold), past the deadline
    infos = 0
    with pytest.raises(BotTimeout, match="kept coming past the deadline"):
        while infos < 100_000:
            assert reader.read_line(deadline=101.0).startswith("info ")
            infos += 1
    # what the pipe held at the deadline, and not much more
    assert capacity // len(line) - 2 <= infos <= (capacity + 65536) // len(line) + 1, infos
