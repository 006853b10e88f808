"""Versions that forfeit every game by their own fault: followed game by game, to be left out.

A version that starts fine and then loses every game by its own fault (no first move in time, a
crash on it, illegal moves, protocol garbage) costs its league a move timeout a game, for ever,
and hands its opponents wins that tell nothing. `league run` leaves such a version out once it
has forfeited its last `FORFEITS_OUT` games in a row, as it does a version that keeps failing
to start, and tries it again after `FORFEIT_PAUSE_S` or at once when its hash changes (a
`league rehash`, a version brought back; a resubmission is a new version, which starts afresh).
Its stored games keep counting: they are real results, and the ratings show them; and the
streaks are followed from the stored games (`tally.StoredTally` feeds them, from the first game
stored on), so a run started again leaves the version out at once instead of paying another
`FORFEITS_OUT` games.

As on Kaggle's and CodinGame's ladders, an agent that errors loses that game and the game stays
on record (rated), and an agent is validated once on submission (here `submit`'s conformance
check); what a league running for weeks adds is not to play on with a version that cannot get
through a game. Only what the arena's reason vocabulary calls a forfeit (`arena.reasons.FORFEIT_REASONS`,
the seat from `forfeiter_seat`) counts: a game the version won, drew or lost on the board, or
that its opponent forfeited, ends its streak, so a version that forfeits only sometimes is never
left out; void games (neither bot started) are the start watch's and change nothing here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from arena.reasons import forfeiter_seat

# 20 in a row: a version that forfeits half its games, each by chance, has a streak of 20 about
# once in a million games (2 ** -20), while a broken one costs 20 move timeouts (20 s at a
# second a move) before it is left out. 10 was the first guess: 1 in 1,000 per game, so such a
# flaky but playing version would be left out within a league's first thousand games.
FORFEITS_OUT = 20
# Half an hour: a run of timeouts may be the machine's (a neighbour's build hogging the cores),
# and after the pause the version's streak is still there, so one more forfeit leaves it out
# again at once, and until then it plays one pair at a time: each try costs a pair, not
# another 20 games (nor a pair per slot of a cluster).
FORFEIT_PAUSE_S = 1800.0

_DETAIL_CHARS = 120  # of the last forfeit's detail, in the line that says why


@dataclass
class Streak:
    """The games in a row, up to the latest, one version forfeited under one program hash."""

    program_hash: str
    games: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    last_detail: str = ""

    def describe(self) -> str:
        reasons = ", ".join(f"{reason} {n}" for reason, n in self.reasons.most_common())
        detail = " ".join(self.last_detail.split())[:_DETAIL_CHARS]
        last = f"; the last: {detail}" if detail else ""
        return f"it forfeited its last {self.games} games by its own fault ({reasons}{last})"


class ForfeitStreaks:
    """Per version, its current streak of forfeits; fed the rated games in the order played."""

    def __init__(self, out_after: int = FORFEITS_OUT) -> None:
        self.out_after = out_after
        self._streaks: dict[str, Streak] = {}
        self._touched: set[str] = set()  # versions with a game since `take_touched`

    def add(self, first: str, second: str, reason: str, forfeit_by: object, result: object,
            detail: str = "", hashes: tuple[str, str] = ("", "")) -> None:
        if first == second:  # a bot's game against itself says nothing of it (a league has none)
            return
        seat = forfeiter_seat(reason, forfeit_by, result)
        for own_seat, name, program_hash in ((1, first, hashes[0]), (2, second, hashes[1])):
            streak = self._streaks.get(name)
            if streak is None or (program_hash and streak.program_hash != program_hash):
                streak = self._streaks[name] = Streak(program_hash)  # another program: afresh
            if seat == own_seat:
                streak.games += 1
                streak.reasons[reason] += 1
                streak.last_detail = detail or ""
            else:
                streak.games = 0
                streak.reasons.clear()
                streak.last_detail = ""
            self._touched.add(name)

    def take_touched(self) -> set[str]:
        """The versions that played since the last call (only they can have reached the
        limit since: one let back in after its pause is judged again by its next game)."""
        touched, self._touched = self._touched, set()
        return touched

    def on_probation(self, name: str) -> bool:
        """Whether `name`'s streak is at the limit (let back in after its pause, it has not
        played a game on the board since): `league run` gives it one pair at a time."""
        streak = self._streaks.get(name)
        return streak is not None and streak.games >= self.out_after

    def out(self, name: str, program_hash: str) -> Streak | None:
        """The streak that leaves `name` out, if it has one under `program_hash` (games of
        another program of the same version, before a rehash, do not count)."""
        streak = self._streaks.get(name)
        if streak is None or streak.games < self.out_after:
            return None
        if streak.program_hash and program_hash and streak.program_hash != program_hash:
            return None
        return streak
