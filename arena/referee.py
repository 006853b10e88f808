"""The referee: plays one game between two bot processes through the engine.

The arena stays in charge whatever the bots do: every wait has an absolute deadline, every line a
size cap, and any failure (timeout, illegal or malformed move, unknown line, oversized line or
flood, crash or exit, failed handshake) loses the game for the bot at fault with a reason and the
offending text (truncated) in `detail`. A game where neither bot could start is void.

`play_game` is thread-safe across distinct players: the tournament runs games in threads.
"""

from __future__ import annotations

import json
import select
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path

from arena import protocol
from arena.botspec import BotSpec, distinct_names
from arena.game import Game, IllegalMoveError, MoveError, Variant, format_move, parse_move
from arena.process import Aborted, BotIOError, BotProcess
from arena.schema import FRAME_COLUMNS

FORFEIT_REASONS = ("timeout", "illegal", "protocol", "crash", "handshake")
MAX_INFO_LINES = 10_000  # info lines per turn before it counts as a flood


class GameAborted(Exception):
    """The stop event was set during a game: both bots were killed and no record was made."""


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
    void: bool = False
    # extras, not in the games table
    infos: list[list[str]] = field(default_factory=list)  # info lines sent with each ply
    startup_ms: list[float | None] = field(default_factory=lambda: [None, None])  # per seat
    time_control: dict = field(default_factory=dict)

    # The games-table columns a game knows itself; the store assigns `seq` and `pair_id`.
    ROW_COLUMNS = tuple(c for c in FRAME_COLUMNS if c not in ("seq", "pair_id"))

    def to_row(self) -> dict:
        row = {name: getattr(self, name) for name in self.ROW_COLUMNS}
        row["moves"] = " ".join(self.moves)
        row["opening"] = " ".join(self.opening)
        row["move_ms"] = json.dumps(self.move_ms)
        row["move_cpu_ms"] = json.dumps(self.move_cpu_ms)
        return row

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def winner_name(self) -> str | None:
        return {1: self.first, 2: self.second}.get(self.winner)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _safe_file_part(text: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "-_.#+" else "_" for ch in text)
    return out.strip(".") or "_"


def log_file_name(game_id: str, seat: int, display_name: str) -> str:
    """`<game_id>-<seat>-<display_name>.log`, with characters unsafe in file names replaced."""
    return f"{_safe_file_part(game_id or 'game')}-{seat}-{_safe_file_part(display_name)}.log"


class _Forfeit(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = protocol.truncate(detail)


class Player:
    """A bot and its process, kept across games.

    The process starts lazily at the first game, is kept for the next games (unless
    `restart_every_game`), and is restarted after any failure. `close()` ends it.
    """

    def __init__(
        self,
        spec: BotSpec,
        display_name: str | None = None,
        log_dir: Path | str | None = None,
        restart_every_game: bool = False,
    ) -> None:
        self.spec = spec
        self._display_name = display_name or spec.name
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.restart_every_game = restart_every_game
        self.process: BotProcess | None = None
        self.hello: dict[str, str] = {}
        self.startup_ms: float | None = None  # of the current process
        self.starts = 0  # processes started so far
        self._fresh = False  # no move answered yet by the current process
        self._handshaken = False

    @property
    def display_name(self) -> str:
        return self._display_name

    @display_name.setter
    def display_name(self, value: str) -> None:
        self._display_name = value

    @property
    def version(self) -> str:
        return self.hello.get("version") or self.spec.version

    def __repr__(self) -> str:
        return f"Player({self.display_name!r})"

    def __enter__(self) -> Player:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.alive

    def _spawn(self) -> None:
        """Start a process if there is none alive, and send the hello line."""
        if self.running and self._handshaken:
            return
        if self.process is not None:
            self.process.kill()
        self.process = None
        self._handshaken = False
        self.hello = {}
        self.startup_ms = None
        process = BotProcess(self.spec.argv, self.spec.cwd)
        self.process = process
        self.starts += 1
        process.start()  # may raise BotStartError (e.g. no such executable)
        self._fresh = True
        process.send(protocol.hello_line(), process.started_at + 1.0)

    def _handshake(self, startup_ms: int, grace_ms: int, stop: threading.Event | None) -> None:
        process = self.process
        deadline = process.started_at + (startup_ms + grace_ms) / 1000
        while True:
            try:
                line = process.read_line(deadline, stop)
            except BotIOError as error:
                if error.reason == "timeout":
                    raise _Forfeit("handshake", f"no hello answer within {startup_ms} ms") from None
                raise _Forfeit(error.reason, f"during the handshake: {error.detail}") from None
            if line.strip():
                break
        try:
            self.hello = protocol.parse_hello_reply(line)
        except protocol.ProtocolError as error:
            raise _Forfeit("handshake", str(error)) from None
        self.startup_ms = (time.monotonic() - process.started_at) * 1000
        self._handshaken = True

    def kill(self) -> None:
        """End the process at once (after a failure)."""
        if self.process is not None:
            self.process.kill()
        self._handshaken = False

    def close(self) -> None:
        """End the process: quit line, SIGTERM, SIGKILL to its group, everything reaped."""
        if self.process is not None:
            self.process.close()
        self._handshaken = False


def play_game(
    variant: Variant,
    first: Player,
    second: Player,
    time_control: TimeControl,
    opening: Sequence[int | str] = (),
    game_id: str = "",
    stop: threading.Event | None = None,
) -> GameRecord:
    """Play one game; `first` takes seat 1 and moves first. Raises GameAborted if `stop` is set."""
    if first is second:
        raise ValueError("a player cannot play against itself: make two Player objects")
    return _Referee(variant, first, second, time_control, opening, game_id, stop).run()


class _Referee:
    def __init__(self, variant, first, second, tc, opening, game_id, stop) -> None:
        tc.check()
        self.variant = variant
        self.players = {1: first, 2: second}
        self.tc = tc
        self.stop = stop
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
            time_control=tc.to_dict(),
        )
        self.tokens = [format_move(m) for m in self.game.moves]
        self.record.move_ms = [0.0] * len(self.tokens)
        self.record.move_cpu_ms = [0.0] * len(self.tokens)
        self.record.infos = [[] for _ in self.tokens]
        self.clock = {1: tc.base_ms, 2: tc.base_ms}
        self.last_ms: dict[int, float | None] = {1: None, 2: None}
        self.in_game: set[int] = set()  # seats that received the game line
        self.processes: dict[int, BotProcess | None] = {1: None, 2: None}

    # --- the game -----------------------------------------------------------------------------

    def run(self) -> GameRecord:
        rec = self.record
        rec.started_at = _now()
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
        rec.finished_at = _now()
        rec.moves = list(self.tokens)
        rec.plies = len(self.tokens)
        self._finish()
        return rec

    def _start_players(self) -> None:
        failures: dict[int, _Forfeit] = {}
        for seat, player in self.players.items():
            if player.restart_every_game and player.running:
                player.close()
            try:
                player._spawn()
            except BotIOError as error:
                failures[seat] = _Forfeit(error.reason, error.detail)
            self.processes[seat] = player.process
        # Both handshakes at once, so that each start-up time is measured as it happens.
        pending = {
            seat: player for seat, player in self.players.items()
            if seat not in failures and not player._handshaken
        }
        allowance = (self.tc.startup_ms + self.tc.grace_ms) / 1000
        while pending:
            if self.stop is not None and self.stop.is_set():
                raise Aborted()
            now = time.monotonic()
            poller = select.poll()
            for player in pending.values():
                poller.register(player.process.fileno(), select.POLLIN)
            earliest = min(p.process.started_at for p in pending.values()) + allowance
            poller.poll(max(0.0, min(earliest - now, 0.05)) * 1000)
            for seat, player in list(pending.items()):
                process = player.process
                if process.ready() or time.monotonic() > process.started_at + allowance:
                    del pending[seat]
                    try:
                        player._handshake(self.tc.startup_ms, self.tc.grace_ms, self.stop)
                    except _Forfeit as failure:
                        failures[seat] = failure
        for seat, player in self.players.items():
            self.record.startup_ms[seat - 1] = (
                round(player.startup_ms, 1) if player.startup_ms is not None
                and player._fresh and seat not in failures else None
            )
        if len(failures) == 2:
            rec = self.record
            rec.void = True
            rec.reason = "void"
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
        tc = self.tc.to_dict()
        for seat, player in self.players.items():
            line = protocol.game_line(
                self.game_id, seat, self.variant.describe(), tc, self.names[3 - seat]
            )
            try:
                player.process.send(line, time.monotonic() + 1.0 + self.tc.grace_ms / 1000)
            except BotIOError as error:
                self._forfeit(seat, _Forfeit(error.reason, error.detail))
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
            except _Forfeit as failure:
                self._forfeit(seat, failure)
                return
            try:
                game.push(move)
            except IllegalMoveError as error:
                self._forfeit(seat, _Forfeit("illegal", f"{error} at ply {game.ply + 1}"))
                return
            self.tokens.append(format_move(move))
            rec.move_ms.append(round(elapsed, 3))
            rec.move_cpu_ms.append(round(cpu, 1))
            rec.infos.append(infos)
        outcome = game.outcome
        rec.winner = outcome.winner
        rec.reason = outcome.reason
        rec.result = {1: 1.0, 2: 0.0, None: 0.5}[outcome.winner]

    def _turn(self, seat: int) -> tuple[int, float, float, list[str]]:
        player = self.players[seat]
        process = player.process
        tc = self.tc
        infos: list[str] = []
        info_chars = 0
        # Lines sent since the last turn: only info lines are allowed.
        try:
            pending = process.pending_lines()
        except BotIOError as error:
            raise _Forfeit(error.reason, error.detail) from None
        for line in pending:
            try:
                kind, text = protocol.parse_bot_line(line)
            except protocol.ProtocolError as error:
                raise _Forfeit("protocol", f"before its turn: {error}") from None
            if kind == "move":
                raise _Forfeit("protocol", f"move sent before its turn: {protocol.truncate(line)}")
            if kind == "info" and info_chars < protocol.INFO_CAP:
                infos.append(text[: protocol.INFO_CAP - info_chars])
                info_chars += len(infos[-1])
        limits = [x for x in (tc.move_ms, self.clock[seat]) if x is not None]
        limit = max(0, min(limits))
        startup = tc.startup_ms if player._fresh else 0
        other = 3 - seat
        line = protocol.turn_line(
            self.tokens, limit, self.clock[other] if tc.base_ms is not None else None,
            self.last_ms[seat],
        )
        cpu_before = process.cpu_ms()
        start = time.monotonic()
        deadline = start + (limit + startup + tc.grace_ms) / 1000
        lines = 0
        try:
            process.send(line, deadline)
            while True:
                text = process.read_line(deadline, self.stop)
                lines += 1
                try:
                    kind, value = protocol.parse_bot_line(text)
                except protocol.ProtocolError as error:
                    raise _Forfeit("protocol", str(error)) from None
                if kind == "move":
                    break
                if lines > MAX_INFO_LINES:
                    raise _Forfeit("protocol", f"flood: over {MAX_INFO_LINES} lines in one turn")
                if kind == "info" and info_chars < protocol.INFO_CAP:
                    infos.append(value[: protocol.INFO_CAP - info_chars])
                    info_chars += len(infos[-1])
        except BotIOError as error:
            if error.reason == "timeout":
                limit_text = f"{limit} ms" + (f" + {startup} ms start-up" if startup else "")
                raise _Forfeit("timeout", f"no move within {limit_text} (+{tc.grace_ms} ms grace)"
                               ) from None
            raise _Forfeit(error.reason, error.detail) from None
        end = time.monotonic()
        elapsed = (end - start) * 1000
        cpu = max(0.0, process.cpu_ms() - cpu_before)
        charged = max(0.0, elapsed - startup)
        player._fresh = False
        self.last_ms[seat] = elapsed
        if self.clock[seat] is not None:
            self.clock[seat] = max(0, int(self.clock[seat] - charged)) + tc.increment_ms
        try:
            move = parse_move(value)
        except MoveError as error:
            raise _Forfeit("protocol", str(error)) from None
        return move, elapsed, cpu, infos

    def _forfeit(self, seat: int, failure: _Forfeit) -> None:
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
            player = self.players[seat]
            if rec.winner is None:
                result = "draw"
            else:
                result = "win" if rec.winner == seat else "loss"
            try:
                player.process.send(
                    protocol.end_line(result, rec.winner, rec.reason, rec.plies),
                    time.monotonic() + 0.5,
                )
            except BotIOError:
                player.kill()
            if player.restart_every_game:
                player.close()
        rec.first_version = self.players[1].version
        rec.second_version = self.players[2].version
        self._write_logs()

    def _write_logs(self) -> None:
        for seat, player in self.players.items():
            process = self.processes[seat]
            if process is None or player.log_dir is None:
                continue
            data, dropped = process.take_stderr(wait=0.2 if process.closed else 0.0)
            if not data:
                continue
            path = player.log_dir / log_file_name(self.game_id, seat, self.names[seat])
            if dropped:
                data += f"\n[arena: {dropped} more bytes of stderr dropped]\n".encode()
            try:
                player.log_dir.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            except OSError:
                pass
