"""The time control of a game: a value object, imported by the referee, the tournament file and
the commands alike (a leaf module: standard library only)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class TimeControl:
    """Per-move limit (`move_ms`) and/or a clock (`base_ms` + `increment_ms` per move).

    With both set, the clock applies and `move_ms` caps each move. `startup_ms` is the allowance
    for starting a process and answering the handshake; the first move of each process gets it
    again on top of its limit (and it is not charged to the clock). `grace_ms` is added to every
    deadline before a bot is declared late.
    """

    move_ms: int | None = 1000
    base_ms: int | None = None
    increment_ms: int = 0
    startup_ms: int = 5000
    grace_ms: int = 200

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        if self.move_ms is None and self.base_ms is None:
            raise ValueError("time control needs a per-move limit (move_ms) or a clock (base_ms)")
        for key in ("move_ms", "base_ms"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, int) or value <= 0):
                raise ValueError(f"time control: {key} must be a positive integer, got {value!r}")
        for key in ("increment_ms", "startup_ms", "grace_ms"):
            value = getattr(self, key)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"time control: {key} must be an integer >= 0, got {value!r}")
        if self.increment_ms and self.base_ms is None:
            raise ValueError("time control: increment_ms needs a clock (base_ms)")

    def hello_deadline(self, started_at: float) -> float:
        """The monotonic time by which a process started at `started_at` must have answered
        `hello`: the start-up allowance and the grace."""
        return started_at + (self.startup_ms + self.grace_ms) / 1000

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TimeControl:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"time control: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        values = dict(data)
        if values.get("base_ms") is not None and "move_ms" not in values:
            values["move_ms"] = None  # a clock alone, unless a per-move cap is asked for too
        return cls(**values)

    def describe(self) -> str:
        parts = []
        if self.base_ms is not None:
            parts.append(f"{self.base_ms / 1000:g}s+{self.increment_ms / 1000:g}s")
        if self.move_ms is not None:
            parts.append(f"{self.move_ms} ms/move")
        return ", ".join(parts)


# Time odds: each seat (or each bot) may play under its own control. A pair is (seat 1's, seat 2's).
SeatControls = tuple[TimeControl, TimeControl]


def per_seat(time_control: TimeControl | SeatControls) -> SeatControls:
    """One control for both seats, or a (seat 1, seat 2) pair, as a checked pair."""
    if isinstance(time_control, TimeControl):
        return time_control, time_control
    pair = tuple(time_control)
    if len(pair) != 2 or not all(isinstance(tc, TimeControl) for tc in pair):
        raise TypeError("a time control is one TimeControl or a (seat 1, seat 2) pair of them, "
                        f"got {time_control!r}")
    return pair[0], pair[1]


def own_time_keys(own: dict) -> dict:
    """The TimeControl keys a bot's own time table replaces (time odds, in tournament files
    and on `arena play`): naming a limit (`move_ms` or `base_ms`) replaces the shared per-move
    limit, clock and increment, as if written alone; other keys (`startup_ms`, `grace_ms`, an
    `increment_ms` alone) change only themselves."""
    if "move_ms" in own or "base_ms" in own:
        return {"move_ms": None, "base_ms": None, "increment_ms": 0, **own}
    return dict(own)


def seconds_text(ms: int) -> str:
    """`50 ms`, `1.5 s`: a duration as a time control's words give it."""
    return f"{ms / 1000:g} s" if ms >= 1000 else f"{ms} ms"


def time_limits_text(tc: Mapping[str, Any]) -> str:
    """The limits of a time control in words, e.g. `1 min per game + 1 s per move`."""
    limits = []
    if tc.get("base_ms") is not None:
        clock = f"{seconds_text(tc['base_ms'])} per game"
        if tc.get("increment_ms"):
            clock += f" + {seconds_text(tc['increment_ms'])} per move"
        limits.append(clock)
    if tc.get("move_ms") is not None:
        limits.append(f"{seconds_text(tc['move_ms'])} per move" if not limits
                      else f"at most {seconds_text(tc['move_ms'])} per move")
    return ", ".join(limits)
