"""The referee: plays one game between two bot processes through the engine.

The arena stays in charge whatever the bots do: every wait has an absolute deadline, every line a
size cap, and any failure (timeout, illegal or malformed move, unknown line, oversized line or
flood, crash or exit, failed handshake) loses the game for the bot at fault with a reason and the
offending text (truncated) in `detail`. A game where neither bot could start is void.

`play_game` is thread-safe across distinct players: the tournament runs games in threads.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from arena import protocol
from arena.botspec import distinct_names
from arena.clock import utc_now_iso
from arena.clocks import GameClocks
from arena.game import Game, IllegalMoveError, MoveError, Variant, first_player_score, format_move, parse_move
from arena.player import Forfeit, InfoCollector, Player, close_players, greet, log_file_name
from arena.process import Aborted
from arena.reasons import Reason
from arena.schema import FRAME_COLUMNS
from arena.sdk import FALLBACK_INFO
from arena.timecontrol import SeatControls, TimeControl, per_seat

# Adjudication asks the solver from this ply on: earlier positions rarely prove within the budget,
# and each unproven ask costs the whole budget.
ADJUDICATE_FROM_PLY = 10

__all__ = ["GameAborted", "GameRecord", "Player", "SeatControls", "TimeControl", "log_file_name",
           "play_game"]

class GameAborted(Exception):
    """The stop event was set during a game: both bots were killed and no record was made."""



STORED_INFO_CHARS = 200  # of the last info line of each ply, stored with the game
MOVE_MS_DIGITS = 3  # decimals of a stored move time (ms): the microsecond


def fallback_counts(last_infos: Sequence[str], opening_plies: int) -> tuple[int, int]:
    """How many moves of the first and of the second bot the SDK played because the bot's move
    function raised: plies whose last info line is the SDK's `FALLBACK_INFO` (sent right before
    such a move; the stored `infos` keep each ply's last line). The opening's plies are nobody's.
    Such a game looks played, and won or lost, by the bot (Kaggle user review)."""
    counts = [0, 0]
    for ply, line in enumerate(last_infos):
        if ply >= opening_plies and line.startswith(FALLBACK_INFO):
            counts[ply % 2] += 1
    return counts[0], counts[1]


def fallback_note(name: str, count: int) -> str:
    """How a game line or a run's summary says it (`fallback_counts`)."""
    return (f"{name}: {count} move{'s' if count != 1 else ''} by the SDK's fallback (its move "
            "function raised; see its log)")


@dataclass
class GameRecord:
    """One finished game; `to_row()` gives the games-table columns (docs/DESIGN.md)."""

    game_id: str
    variant: str
    first: str
    second: str
    result: float | None = None
    winner: int | None = None
    reason: str = ""
    forfeit_by: int | None = None
    plies: int = 0
    moves: list[str] = field(default_factory=list)
    opening: list[str] = field(default_factory=list)
    move_ms: list[float] = field(default_factory=list)
    move_cpu_ms: list[float] = field(default_factory=list)
    detail: str = ""
    started_at: str = ""
    finished_at: str = ""
    first_hash: str = ""
    second_hash: str = ""
    first_version: str = ""
    second_version: str = ""
    sandboxed: bool = False  # both bots ran in the bubblewrap sandbox
    first_tc: dict = field(default_factory=dict)  # each seat's TimeControl.to_dict()
    second_tc: dict = field(default_factory=dict)
    seed: int | None = None  # told to both bots in the `game` line (tournaments)
    void: bool = False
    # extras, not in the games table
    infos: list[list[str]] = field(default_factory=list)  # info lines sent with each ply
    startup_ms: list[float | None] = field(default_factory=lambda: [None, None])  # per seat
    # seat -> "reason: detail" of each bot that failed to start (or to answer hello) this game
    start_failures: dict[int, str] = field(default_factory=dict)
    time_control: dict = field(default_factory=dict)  # seat 1's (the only one without odds)

    # The games-table columns a game knows itself; the store assigns `seq` and `pair_id`.
    ROW_COLUMNS = tuple(c for c in FRAME_COLUMNS if c not in ("seq", "pair_id"))

    def to_row(self) -> dict:
        row = {name: getattr(self, name) for name in self.ROW_COLUMNS}
        row["moves"] = " ".join(self.moves)
        row["opening"] = " ".join(self.opening)
        row["move_ms"] = json.dumps(self.move_ms)
        row["move_cpu_ms"] = json.dumps(self.move_cpu_ms)
        row["infos"] = json.dumps(self.stored_infos())
        row["sandboxed"] = int(self.sandboxed)
        for name in ("first_tc", "second_tc"):
            control = getattr(self, name)
            row[name] = json.dumps(control, sort_keys=True) if control else ""
        return row

    def fallback_counts(self) -> tuple[int, int]:
        """Moves of (first, second) the SDK played because the bot's move function raised."""
        return fallback_counts(self.stored_infos(), len(self.opening))

    def stored_infos(self) -> list[str]:
        """Per ply, the last info line the mover sent, cut to STORED_INFO_CHARS: its search's
        final depth and score, as cutechess keeps in its PGN comments (every info line of a
        game could be 170 KB)."""
        return [lines[-1][:STORED_INFO_CHARS] if lines else "" for lines in self.infos]

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def winner_name(self) -> str | None:
        return {1: self.first, 2: self.second}.get(self.winner)


def play_game(
    variant: Variant,
    first: Player,
    second: Player,
    time_control: TimeControl | SeatControls,
    opening: Sequence[int | str] = (),
    game_id: str = "",
    stop: threading.Event | None = None,
    adjudicate_s: float | None = None,
    seed: int | None = None,
) -> GameRecord:
    """Play one game; `first` takes seat 1 and moves first. Raises GameAborted if `stop` is set.

    `time_control` is one TimeControl for both seats, or a (seat 1, seat 2) pair for time odds:
    each seat is then told, timed and charged by its own control. `seed` is told to both bots
    in the `game` line and stored with the game."""
    if first is second:
        raise ValueError("a player cannot play against itself: make two Player objects")
    return _Referee(variant, first, second, time_control, opening, game_id, stop, adjudicate_s,
                    seed).run()


class _Referee:
    def __init__(self, variant: Variant, first: Player, second: Player,
                 tc: TimeControl | SeatControls, opening: Sequence[int | str], game_id: str,
                 stop: threading.Event | None, adjudicate_s: float | None = None,
                 seed: int | None = None) -> None:
        controls = per_seat(tc)
        for control in controls:
            control.check()
        self.variant = variant
        self.players = {1: first, 2: second}
        self.seat_controls = controls
        self.controls: dict[int, TimeControl] = {1: controls[0], 2: controls[1]}
        self.stop = stop
        self.adjudicate_s = adjudicate_s  # solver seconds per position; None: play to the end
        self.game_id = game_id
        self.game = Game(variant)
        for move in opening:
            m = parse_move(move) if isinstance(move, str) else int(move)
            self.game.push(m)  # an illegal opening is the caller's bug: IllegalMoveError
        names = distinct_names([first.display_name, second.display_name])
        self.names = {1: names[0], 2: names[1]}
        self.record = GameRecord(
            game_id=game_id,
            variant=variant.spec,
            first=names[0],
            second=names[1],
            opening=[format_move(m) for m in self.game.moves],
            first_hash=first.spec.program_hash,
            second_hash=second.spec.program_hash,
            first_tc=controls[0].to_dict(),
            second_tc=controls[1].to_dict(),
            seed=seed,
            time_control=controls[0].to_dict(),
        )
        self.tokens = [format_move(m) for m in self.game.moves]
        self.record.move_ms = [0.0] * len(self.tokens)
        self.record.move_cpu_ms = [0.0] * len(self.tokens)
        self.record.infos = [[] for _ in self.tokens]
        self.clocks = GameClocks(controls)
        self.in_game: set[int] = set()  # seats that received the game line

    # --- the game -----------------------------------------------------------------------------

    def run(self) -> GameRecord:
        rec = self.record
        rec.started_at = utc_now_iso()
        try:
            self._start_players()
            if not rec.void and rec.forfeit_by is None:
                self._play()
        except Aborted:
            for player in self.players.values():
                player.kill()
            raise GameAborted(f"game {self.game_id!r} aborted") from None
        except BaseException:
            for player in self.players.values():
                player.kill()
            raise
        rec.finished_at = utc_now_iso()
        rec.moves = list(self.tokens)
        rec.plies = len(self.tokens)
        self._finish()
        return rec

    def _start_players(self) -> None:
        failures = greet(self.players, self.seat_controls, self.stop)
        self.record.start_failures = {seat: f"{failure.reason}: {failure.detail}"
                                      for seat, failure in failures.items()}
        for seat, player in self.players.items():
            self.record.startup_ms[seat - 1] = (
                round(player.startup_ms, 1) if player.startup_ms is not None
                and player.fresh and seat not in failures else None
            )
        if len(failures) == 2:
            rec = self.record
            rec.void = True
            rec.reason = Reason.VOID.value
            rec.detail = protocol.truncate(
                f"seat 1: {failures[1].reason}: {failures[1].detail}; "
                f"seat 2: {failures[2].reason}: {failures[2].detail}", 400
            )
            for player in self.players.values():
                player.kill()
            return
        for seat, failure in failures.items():
            self._forfeit(seat, failure)
            return
        for seat, player in self.players.items():
            tc = self.controls[seat]  # each bot is told its own time control
            line = protocol.game_line(
                self.game_id, seat, self.variant.describe(), tc.to_dict(), self.names[3 - seat],
                seed=self.record.seed,
            )
            try:
                player.send(line, time.monotonic() + 1.0 + tc.grace_ms / 1000)
            except Forfeit as failure:
                self._forfeit(seat, failure)
                return
            self.in_game.add(seat)

    def _play(self) -> None:
        game = self.game
        rec = self.record
        while game.outcome is None:
            if self.stop is not None and self.stop.is_set():
                raise Aborted()
            seat = game.to_move
            try:
                move, elapsed, cpu, infos = self._turn(seat)
            except Forfeit as failure:
                self._forfeit(seat, failure)
                return
            try:
                game.push(move)
            except IllegalMoveError as error:
                # the ply of the turn line the bot answered (PROTOCOL.md), to find in its log
                self._forfeit(seat, Forfeit(Reason.ILLEGAL, f"{error}, in its turn at ply={game.ply}"))
                return
            self.tokens.append(format_move(move))
            rec.move_ms.append(round(elapsed, MOVE_MS_DIGITS))
            rec.move_cpu_ms.append(round(cpu, 1))
            rec.infos.append(infos)
            if (self.adjudicate_s is not None and game.ply >= ADJUDICATE_FROM_PLY
                    and game.outcome is None and self._adjudicated()):
                return
        outcome = game.outcome
        rec.winner = outcome.winner
        rec.reason = outcome.reason
        rec.result = first_player_score(outcome.winner)

    def _adjudicated(self) -> bool:
        """End the game with the result the exact solver proves, if it proves one in time."""
        from arena.solver.adjudicate import adjudicate  # numba: only when adjudication is on

        verdict = adjudicate(self.game, self.adjudicate_s)
        if verdict is None:
            return False
        rec = self.record
        rec.winner, rec.result, rec.reason = verdict.winner, verdict.result, Reason.ADJUDICATED.value
        return True

    def _turn(self, seat: int) -> tuple[int, float, float, list[str]]:
        player = self.players[seat]
        infos = InfoCollector()
        player.take_unsolicited(infos)
        budget = self.clocks.budget(seat, player.start_up_allowance)
        line = protocol.turn_line(
            self.tokens, budget.limit_ms, self.clocks.opponent_time_ms(seat),
            self.clocks.last_ms[seat],
        )
        reply = player.play_turn(line, budget, infos, self.stop)
        # charged as stored (`move_ms`, to the microsecond): a clock truncates to whole ms after
        # each move, so charging the unrounded time made `replay --protocol`'s clocks rebuilt
        # from the record drift by a millisecond a move from those the bots were told
        elapsed = round(reply.elapsed_ms, MOVE_MS_DIGITS)
        self.clocks.charge(seat, elapsed, budget)
        try:
            move = parse_move(reply.token)
        except MoveError as error:
            raise Forfeit(Reason.PROTOCOL, str(error)) from None
        return move, elapsed, reply.cpu_ms, infos.lines

    def _forfeit(self, seat: int, failure: Forfeit) -> None:
        rec = self.record
        rec.forfeit_by = seat
        rec.reason = failure.reason
        rec.detail = failure.detail
        rec.winner = 3 - seat
        rec.result = 1.0 if seat == 2 else 0.0
        self.players[seat].kill()
        self.in_game.discard(seat)

    def _finish(self) -> None:
        rec = self.record
        for seat in sorted(self.in_game):
            if rec.winner is None:
                result = "draw"
            else:
                result = "win" if rec.winner == seat else "loss"
            self.players[seat].end_game(protocol.end_line(result, rec.winner, rec.reason, rec.plies))
        for seat, player in self.players.items():
            player.start_log(self.game_id, seat, self.names[seat])
        started = [p.process for p in self.players.values() if p.process is not None]
        rec.sandboxed = bool(started) and all(getattr(t, "sandboxed", False) for t in started)
        # The next game starts while these processes end (their exits overlap).
        close_players((p for p in self.players.values() if p.restart_every_game), wait=False)
        rec.first_version = self.players[1].version
        rec.second_version = self.players[2].version
