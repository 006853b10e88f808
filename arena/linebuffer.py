"""Framing a bot's output into lines: bytes in, lines out, with a size cap. Pure (no I/O).

A line ends with `\\n` or `\\r\\n`; the ending does not count towards the cap (so a `\\r` right
after exactly `cap` bytes may still be followed by its `\\n`). Bytes that are not UTF-8 are
replaced, tabs and other whitespace inside a line are kept as sent (the protocol parser splits
words on any whitespace). Each line remembers when the chunk that completed it arrived.
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

from arena.boterrors import BotLineTooLong


class Arrival(NamedTuple):
    """When a chunk of output arrived: after `earliest` (the last moment the pipe was seen
    empty) and by `latest` (when it was read)."""

    earliest: float
    latest: float


UNKNOWN_ARRIVAL = Arrival(0.0, 0.0)


class LineBuffer:
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._buf = bytearray()
        self._arrivals: deque[Arrival] = deque()  # one per newline in the buffer, in order
        self.last_arrival = UNKNOWN_ARRIVAL  # of the last line taken

    def __len__(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes, arrival: Arrival = UNKNOWN_ARRIVAL) -> None:
        self._buf += data
        self._arrivals.extend([arrival] * data.count(b"\n"))

    def has_line(self) -> bool:
        return bool(self._arrivals)

    def head(self, n: int = 80) -> bytes:
        return bytes(self._buf[:n])

    def take_line(self) -> str | None:
        """The first complete line, removed with its ending; None if there is none yet.
        Raises BotLineTooLong if the line is over the cap."""
        buf = self._buf
        i = buf.find(b"\n")
        if i < 0:
            return None
        end = i - 1 if i > 0 and buf[i - 1] == 0x0D else i
        if end > self.cap:
            raise BotLineTooLong(
                f"line over the cap of {self.cap} bytes",
                f"line of {end} bytes: {bytes(buf[:80])!r}...",
            )
        line = buf[:end].decode("utf-8", "replace")
        del buf[: i + 1]
        self.last_arrival = self._arrivals.popleft()
        return line

    def over_cap(self) -> bool:
        """No newline and already more than a line may hold: the line can only be too long."""
        n = len(self._buf)
        if self._arrivals:
            return False
        return n > self.cap + 1 or (n == self.cap + 1 and self._buf[-1] != 0x0D)

    def check_cap(self) -> None:
        """Raises BotLineTooLong if the unfinished line is already over the cap."""
        if self.over_cap():
            raise BotLineTooLong(
                f"line over the cap of {self.cap} bytes without a newline",
                f"{len(self._buf)}+ bytes without a newline: {self.head()!r}...",
            )

    def wants_more(self) -> bool:
        """Whether reading more can still complete a line within the cap (bounds what is read
        ahead from a flooding bot)."""
        return len(self._buf) <= self.cap + 1

    def pending_lines(self) -> list[str]:
        """Every complete line in the buffer; an over-long one stays (for `take_line` to report)."""
        lines = []
        while self._arrivals:
            try:
                line = self.take_line()
            except BotLineTooLong:
                break
            if line is None:  # pragma: no cover - an arrival always stands for a newline
                break
            lines.append(line)
        return lines
