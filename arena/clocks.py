"""Time accounting of one game: what each bot is told it has, when it is late, what it is charged.

Pure (no processes, no clock reads): the referee passes the measured times in, so every rule of a
time control is testable with plain numbers.

- Per-move limit (`move_ms`) and/or a clock (`base_ms` + `increment_ms` per move); with both, the
  clock applies and `move_ms` caps each move. A bot is told the smaller of the two (`time_ms`).
- The first move of a fresh process gets `startup_ms` on top, and that part is not charged
  (without pondering, the first move of every game: `Player.start_up_allowance`).
- `grace_ms` is added to every deadline before a bot is declared late; it is charged if used:
  on a clock, time used past zero is owed (the clock goes below zero, and the grace shrinks by
  as much until increments repay it), so that a bot cannot live on the grace of each move.
- Time odds: each seat may have its own control; every rule above applies per seat.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.timecontrol import SeatControls, TimeControl, per_seat


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
    """Both seats' remaining clocks and last move times, each seat under its own time control
    (one `TimeControl` for both, or a (seat 1, seat 2) pair for time odds)."""

    def __init__(self, tc: TimeControl | SeatControls) -> None:
        first, second = per_seat(tc)
        self.controls: dict[int, TimeControl] = {1: first, 2: second}
        self.remaining: dict[int, int | None] = {1: first.base_ms, 2: second.base_ms}
        self.last_ms: dict[int, float | None] = {1: None, 2: None}

    def budget(self, seat: int, fresh: bool) -> TurnBudget:
        """The budget of `seat`'s next move; `fresh`: it gets the start-up allowance."""
        tc = self.controls[seat]
        remaining = self.remaining[seat]
        limits = [x for x in (tc.move_ms, remaining) if x is not None]
        owed = -min(0, remaining or 0)  # clock time already used past zero, out of the grace
        return TurnBudget(max(0, min(limits)), tc.startup_ms if fresh else 0,
                          max(0, tc.grace_ms - owed))

    def opponent_time_ms(self, seat: int) -> int | None:
        """The opponent's remaining clock as the turn line shows it (None: it has no clock)."""
        remaining = self.remaining[3 - seat]
        return max(0, remaining) if remaining is not None else None

    def charge(self, seat: int, elapsed_ms: float, budget: TurnBudget) -> None:
        """Record a move of `elapsed_ms` (wall time from the turn line to the move's arrival)."""
        self.last_ms[seat] = elapsed_ms
        remaining = self.remaining[seat]
        if remaining is not None:
            charged = max(0.0, elapsed_ms - budget.startup_ms)
            # below zero by what the grace covered (it was a sudden-death clock that never ran
            # out: every move at 0 ms left was allowed its grace again)
            grace = self.controls[seat].grace_ms  # a move past it was late: never charged here
            self.remaining[seat] = (max(-grace, int(remaining - charged))
                                    + self.controls[seat].increment_ms)
