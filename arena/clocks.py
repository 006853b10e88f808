"""Time accounting of one game: what each bot is told it has, when it is late, what it is charged.

Pure (no processes, no clock reads): the referee passes the measured times in, so every rule of a
time control is testable with plain numbers.

- Per-move limit (`move_ms`) and/or a clock (`base_ms` + `increment_ms` per move); with both, the
  clock applies and `move_ms` caps each move. A bot is told the smaller of the two (`time_ms`).
- The first move of a fresh process gets `startup_ms` on top, and that part is not charged.
- `grace_ms` is added to every deadline before a bot is declared late; it is charged if used.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.timecontrol import TimeControl


@dataclass(frozen=True)
class TurnBudget:
    """The time a bot has for one move."""

    limit_ms: int  # what the turn line says (`time_ms`)
    startup_ms: int  # extra allowance of a fresh process, not charged
    grace_ms: int

    @property
    def allowed_ms(self) -> int:
        return self.limit_ms + self.startup_ms + self.grace_ms

    def deadline(self, start: float) -> float:
        """The absolute deadline (seconds, same clock as `start`) of a move asked at `start`."""
        return start + self.allowed_ms / 1000

    def timeout_detail(self) -> str:
        startup = f" + {self.startup_ms} ms start-up" if self.startup_ms else ""
        return f"no move within {self.limit_ms} ms{startup} (+{self.grace_ms} ms grace)"


class GameClocks:
    """Both seats' remaining clocks and last move times under one time control."""

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        self.remaining: dict[int, int | None] = {1: tc.base_ms, 2: tc.base_ms}
        self.last_ms: dict[int, float | None] = {1: None, 2: None}

    def budget(self, seat: int, fresh: bool) -> TurnBudget:
        """The budget of `seat`'s next move; `fresh`: its process has not answered a move yet."""
        limits = [x for x in (self.tc.move_ms, self.remaining[seat]) if x is not None]
        return TurnBudget(max(0, min(limits)), self.tc.startup_ms if fresh else 0, self.tc.grace_ms)

    def opponent_time_ms(self, seat: int) -> int | None:
        """The opponent's remaining clock as the turn line shows it (None: no clock)."""
        return self.remaining[3 - seat] if self.tc.base_ms is not None else None

    def charge(self, seat: int, elapsed_ms: float, budget: TurnBudget) -> None:
        """Record a move of `elapsed_ms` (wall time from the turn line to the move's arrival)."""
        self.last_ms[seat] = elapsed_ms
        remaining = self.remaining[seat]
        if remaining is not None:
            charged = max(0.0, elapsed_ms - budget.startup_ms)
            self.remaining[seat] = max(0, int(remaining - charged)) + self.tc.increment_ms
