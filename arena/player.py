"""A player: one bot and its process, kept across games, seen by the referee through a public API.

The referee decides the game (rules, clocks, records); a `Player` does the bot's side of the
protocol: start and greet the process, send lines, read a turn's answer with its info lines,
and end the process. Failures come out as `Forfeit(reason, detail)`.

The process is reached through a transport (`BotProcess` by default); tests pass a scripted
fake through `transport_factory`, so the protocol logic runs without processes.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from arena import protocol
from arena.botspec import BotSpec
from arena.bytecode import prepare_bot
from arena.clocks import TurnBudget
from arena.process import STDERR_CAP, Aborted, BotExited, BotIOError, BotProcess, BotTimeout
from arena.reasons import STDERR_SAID, Reason, no_hello
from arena.sandbox import SandboxPolicy
from arena.timecontrol import SeatControls, TimeControl, per_seat

MAX_INFO_LINES = 10_000  # info lines per turn before it counts as a flood
CLOSE_JOIN_S = 30.0  # longest wait for a background close (a close is bounded well below)


class Transport(Protocol):
    """What a player needs of a bot process (`arena.process.BotProcess` is the real one)."""

    started_at: float  # time.monotonic() at start
    last_line_at: float  # time.monotonic() at which the last line read had arrived
    closed: bool

    def start(self) -> None: ...
    def send(self, line: str, deadline: float | None = None) -> None: ...
    def read_line(self, deadline: float, stop: threading.Event | None = None) -> str: ...
    def pending_lines(self) -> list[str]: ...
    def ready(self) -> bool: ...
    def fileno(self) -> int: ...
    def cpu_ms(self) -> float: ...
    def take_stderr(self, wait: float = 0.0) -> tuple[bytes, int]: ...
    def stderr_last_line(self, wait: float = 0.0) -> str: ...
    @property
    def alive(self) -> bool: ...
    def begin_close(self, quit_line: str | None = protocol.QUIT_LINE) -> None: ...
    def close(self, quit_line: str | None = protocol.QUIT_LINE) -> None: ...
    def kill(self) -> None: ...
    def freeze(self) -> None: ...
    def thaw(self) -> None: ...
    def follow_cpu(self, cpu: int) -> None: ...


def bot_process(spec: BotSpec, sandbox_policy: SandboxPolicy | None = None) -> Transport:
    """The real transport: the bot's program as a subprocess (sandboxed as `sandbox_policy`
    says; None: the process-wide default policy, see arena.sandbox.set_default_policy)."""
    prepare_bot(spec)  # the arena modules it imports start from bytecode, not source
    return BotProcess(spec.argv, spec.cwd, sandbox_policy=sandbox_policy)


def _safe_file_part(text: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "-_.#+" else "_" for ch in text)
    return out.strip(".") or "_"


def log_file_name(game_id: str, seat: int, display_name: str) -> str:
    """`<game_id>-<seat>-<display_name>.log`, with characters unsafe in file names replaced."""
    return f"{_safe_file_part(game_id or 'game')}-{seat}-{_safe_file_part(display_name)}.log"


class StderrLog:
    """One game's stderr log of one bot: created at the first bytes, appended to afterwards,
    never more than `cap` bytes of the bot's output (plus a note of what was dropped)."""

    def __init__(self, path: Path, cap: int = STDERR_CAP) -> None:
        self.path = path
        self.cap = cap
        self.size = 0  # bytes of the bot's output written
        self.written = False

    def add(self, data: bytes, dropped: int) -> None:
        room = max(0, self.cap - self.size)
        dropped += max(0, len(data) - room)
        data = data[:room]
        self.size += len(data)
        if dropped:
            data += f"\n[arena: {dropped} more bytes of stderr dropped]\n".encode()
        if not data:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab" if self.written else "wb") as f:
                f.write(data)
            self.written = True
        except OSError:
            pass  # a log is not worth stopping a tournament for


# after a wrong answer to hello, how long and how many lines of what follows are kept
WRONG_HELLO_WAIT_S = 0.3
WRONG_HELLO_LINES = 3


class WrongHello(protocol.ProtocolError):
    """A line other than the answer to hello, with what the bot wrote next (`what_followed`);
    `ended`: the bot then exited, which `arena check` hints at as its program's error. A flag,
    not a phrase in the text: the text quotes the bot, which could write any phrase."""

    def __init__(self, text: str, ended: bool) -> None:
        super().__init__(text)
        self.ended = ended


def what_followed(process: Transport) -> tuple[str, bool]:
    """What a bot that answered hello with another line wrote next, as `; then ...` parts, and
    whether it then exited: a runtime's error on stdout (the JVM's "Error occurred during
    initialization of VM") is in its second line, and the first alone read as a protocol
    mistake."""
    lines: list[str] = []
    ended = ""
    deadline = time.monotonic() + WRONG_HELLO_WAIT_S
    while len(lines) < WRONG_HELLO_LINES:
        try:
            line = process.read_line(deadline)
        except BotExited as error:
            ended = f"; then it ended ({error})"
            break
        except BotIOError:
            break
        if line.strip():
            lines.append(protocol.truncate(line.strip()))
    return "".join(f"; then {line!r}" for line in lines) + ended, bool(ended)


def wrong_hello(error: protocol.ProtocolError, process: Transport) -> WrongHello:
    """`error` (a wrong answer to hello) with what followed it."""
    followed, ended = what_followed(process)
    return WrongHello(f"{error}{followed}", ended)


class Forfeit(Exception):
    """A bot loses the game: `reason` (an arena.reasons value) and the offending text."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = str(reason)  # a plain str in records, also for Reason members
        self.detail = protocol.truncate(detail)

    @classmethod
    def from_io(cls, error: BotIOError, context: str = "", stderr_said: str = "") -> Forfeit:
        """The forfeit of an I/O failure; `stderr_said`: the bot's last stderr line, if any."""
        said = f"{STDERR_SAID}{stderr_said}" if stderr_said else ""
        return cls(error.reason, f"{context}{error.detail}{said}")


class InfoCollector:
    """The info lines sent with one ply: whole lines up to `cap` characters in all, then the
    latest line past them (the others are dropped, which is not a fault of the bot). The last
    line a bot sent is the one stored with its move: once past the cap it was stored cut short
    at the cap, or an earlier line instead (review as a new user)."""

    def __init__(self, cap: int = protocol.INFO_CAP) -> None:
        self.cap = cap
        self.kept: list[str] = []
        self.chars = 0
        self.latest: str | None = None  # the last line that did not fit, cut to `cap`

    def add(self, text: str) -> None:
        if self.latest is None and self.chars + len(text) <= self.cap:
            self.kept.append(text)
            self.chars += len(text)
        else:
            self.latest = text[: self.cap]

    @property
    def lines(self) -> list[str]:
        return self.kept if self.latest is None else [*self.kept, self.latest]


@dataclass(frozen=True)
class TurnReply:
    token: str  # the move as the bot wrote it (not parsed yet)
    elapsed_ms: float  # turn line written -> move line arrived
    cpu_ms: float  # CPU time the bot used meanwhile


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
        transport_factory: Callable[[BotSpec], Transport] = bot_process,
        ponder: bool = True,
    ) -> None:
        self.spec = spec
        # False: the bot's processes are stopped whenever it has no turn to play (`ponder =
        # false`): from its hello answer and from each move until its next turn line, so that
        # it cannot take CPU from its opponent, or from other games while it waits in a pool
        self.ponder = ponder
        self.display_name = display_name or spec.name
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.restart_every_game = restart_every_game
        self.transport_factory = transport_factory
        self.process: Transport | None = None
        self.hello: dict[str, str] = {}
        self.startup_ms: float | None = None  # of the current process
        self.starts = 0  # processes started so far
        self._fresh = False  # no move answered yet by the current process
        self._game_start = False  # no move answered yet in the current game
        self._handshaken = False
        self._log: StderrLog | None = None  # of the last game, until the next one starts
        self._retiring: list[threading.Thread] = []  # background closes (see `retire`)

    @property
    def version(self) -> str:
        return self.hello.get("version") or self.spec.version

    def __repr__(self) -> str:
        return f"Player({self.display_name!r})"

    def __enter__(self) -> Player:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- state --------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.alive

    @property
    def handshaken(self) -> bool:
        """The current process answered `hello` (it may play)."""
        return self._handshaken

    @property
    def fresh(self) -> bool:
        """The current process has not answered a move yet (it gets the start-up allowance)."""
        return self._fresh

    @property
    def start_up_allowance(self) -> bool:
        """Its next move gets the start-up allowance: the first move of a fresh process, and
        without pondering the first move of each game too, where a stopped bot first reads the
        game's `game` line (and the last game's `end`), work a pondering bot does between
        games."""
        return self._fresh or (not self.ponder and self._game_start)

    def follow_cpu(self, cpu: int) -> None:
        """Run the bot's live process on `cpu`, its worker's core as a game begins (`arena.
        affinity`): a process started for the game follows from its next one."""
        if self.process is not None:
            self.process.follow_cpu(cpu)

    # --- start and handshake ------------------------------------------------------------------

    def prepare(self) -> None:
        """Before a game: keep a greeted process, or start one and send `hello`.

        Under `restart_every_game` a running process is ended first. Raises BotIOError (e.g.
        BotStartError: no such executable).
        """
        self._flush_log()
        if self.log_dir is None and self.process is not None:
            # no log to keep it in: only a crash's last line is read from it, which must be
            # this game's (and the capped buffer must not fill up once for good)
            self.process.take_stderr()
        self._log = None
        self._game_start = True
        if self.restart_every_game and self.running:
            self.retire()
        if self.running and self._handshaken:
            return
        if self.process is not None:
            self.process.kill()
        self.process = None
        self._handshaken = False
        self.hello = {}
        self.startup_ms = None
        process = self.transport_factory(self.spec)
        self.process = process
        self.starts += 1
        process.start()
        self._fresh = True
        process.send(protocol.hello_line(), process.started_at + 1.0)

    def hello_due(self, allowance_s: float) -> bool:
        """True once the handshake can be decided without waiting: an answer (or end of output)
        is there, or the start-up allowance is over."""
        process = self.process
        return process.ready() or time.monotonic() > process.started_at + allowance_s

    def _io_forfeit(self, error: BotIOError, context: str = "") -> Forfeit:
        """The forfeit of an I/O failure. A bot that died (a wrong argument, a missing module,
        an assertion in its 30th move) says why on stderr: the record says it too, not only the
        log, which `arena check` and a `play` without `--log-dir` do not keep."""
        said = self.process.stderr_last_line(0.3) if error.reason == Reason.CRASH else ""
        if (isinstance(error, BotExited) and error.exit_code == 0 and self._game_start
                and not self._fresh):  # a bot written for one process per game
            context += ("it ended after its previous game (a bot keeps running from game to "
                        "game until `quit`): ")
        return Forfeit.from_io(error, context, said)

    def handshake(self, tc: TimeControl, stop: threading.Event | None = None) -> None:
        """Read the answer to `hello` (blank lines skipped). Raises Forfeit or Aborted."""
        process = self.process
        deadline = tc.hello_deadline(process.started_at)
        while True:
            try:
                line = process.read_line(deadline, stop)
            except BotIOError as error:
                if isinstance(error, BotTimeout):
                    raise Forfeit(Reason.HANDSHAKE,
                                  no_hello(tc.startup_ms) + error.unfinished_note()) from None
                raise self._io_forfeit(error, "during the handshake: ") from None
            if line.strip():
                break
        try:
            self.hello = protocol.parse_hello_reply(line)
        except protocol.ProtocolError as error:
            raise Forfeit(Reason.HANDSHAKE, str(wrong_hello(error, self.process))) from None
        self.startup_ms = (process.last_line_at - process.started_at) * 1000
        self._handshaken = True
        if not self.ponder:
            # stopped until its first turn: a second seat, or a bot waiting in a warm pool,
            # cannot compute while another bot thinks (it reads the `game` line when resumed)
            process.freeze()

    # --- during a game ------------------------------------------------------------------------

    def send(self, line: str, deadline: float) -> None:
        """Send one line; raises Forfeit if the bot is gone or does not read."""
        try:
            self.process.send(line, deadline)
        except BotIOError as error:
            raise self._io_forfeit(error) from None

    def take_unsolicited(self, infos: InfoCollector) -> None:
        """Lines sent since the last turn: info lines are kept, anything else is a Forfeit."""
        try:
            pending = self.process.pending_lines()
        except BotIOError as error:
            raise self._io_forfeit(error) from None
        for line in pending:
            try:
                kind, text = protocol.parse_bot_line(line)
            except protocol.ProtocolError as error:
                raise Forfeit(Reason.PROTOCOL, f"before its turn: {error}") from None
            if kind == "move":
                raise Forfeit(Reason.PROTOCOL,
                              f"move sent before its turn: {protocol.truncate(line)}")
            if kind == "info":
                infos.add(text)

    def play_turn(self, line: str, budget: TurnBudget, infos: InfoCollector,
                  stop: threading.Event | None = None) -> TurnReply:
        """Send the turn line and read lines until the move. Raises Forfeit or Aborted.

        The move counts if it arrived by the deadline; its time is measured to its arrival, so a
        referee that looks late neither charges the bot nor lets a late move through.
        """
        process = self.process
        process.thaw()
        cpu_before = process.cpu_ms()
        start = time.monotonic()
        deadline = budget.deadline(start)
        lines = 0
        try:
            process.send(line, deadline)
            while True:
                text = process.read_line(deadline, stop)
                lines += 1
                try:
                    kind, value = protocol.parse_bot_line(text)
                except protocol.ProtocolError as error:
                    raise Forfeit(Reason.PROTOCOL, str(error)) from None
                if kind == "move":
                    break
                if lines > MAX_INFO_LINES:
                    raise Forfeit(Reason.PROTOCOL,
                                  f"flood: over {MAX_INFO_LINES} lines in one turn")
                if kind == "info":
                    infos.add(value)
        except BotIOError as error:
            if isinstance(error, BotTimeout):
                raise Forfeit(Reason.TIMEOUT,
                              budget.timeout_detail() + error.unfinished_note()) from None
            raise self._io_forfeit(error) from None
        elapsed = (process.last_line_at - start) * 1000
        cpu = max(0.0, process.cpu_ms() - cpu_before)
        self._fresh = self._game_start = False
        if not self.ponder:
            process.freeze()
        return TurnReply(value, elapsed, cpu)

    def end_game(self, line: str) -> None:
        """Send the `end` line (a bot that cannot take it is ended). Without pondering the bot
        stays stopped: it reads the line when it resumes, at its next turn or its close, so that
        a bot kept for later games cannot compute while the others play."""
        try:
            self.process.send(line, time.monotonic() + 0.5)
        except BotIOError:
            self.kill()

    def take_stderr(self, wait: float = 0.0) -> tuple[bytes, int]:
        """The current process's stderr since the last call, and the bytes dropped over the cap."""
        if self.process is None:
            return b"", 0
        return self.process.take_stderr(wait)

    def start_log(self, game_id: str, seat: int, name: str) -> None:
        """After a game: its stderr log (in `log_dir`) gets what the bot wrote so far, and what
        it writes until its next game starts or its process ends (e.g. in answer to `end`).
        Without pondering a kept bot reads `end` only at its next game's first turn, so what
        it writes in answer lands in that game's log."""
        self._log = None
        if self.log_dir is None:
            return
        self._log = StderrLog(self.log_dir / log_file_name(game_id, seat, name))
        self._flush_log()

    def _flush_log(self, wait: float = 0.0) -> None:
        if self._log is not None and self.process is not None:
            self._log.add(*self.process.take_stderr(wait))

    # --- ending -------------------------------------------------------------------------------

    def kill(self) -> None:
        """End the process at once (after a failure)."""
        if self.process is not None:
            self.process.kill()
        self._handshaken = False

    def begin_close(self) -> None:
        """Ask the process to quit without waiting (see `close_players`)."""
        if self.process is not None:
            self.process.begin_close()

    def retire(self) -> None:
        """End the process without waiting for it (restart every game): the quit line is sent
        now; waiting for the exit, killing what is left and reaping run in a thread, while the
        next game starts. What it writes to stderr meanwhile goes to its last game's log.
        `close()` waits for every retired process to be gone."""
        process, log = self.process, self._log
        self.process = None
        self._handshaken = False
        self._log = None
        if process is None:
            return
        process.begin_close()

        def finish() -> None:
            process.close()
            if log is not None:
                log.add(*process.take_stderr(0.2))

        self._retiring = [t for t in self._retiring if t.is_alive()]
        thread = threading.Thread(target=finish, name=f"close-{self.display_name}", daemon=True)
        thread.start()
        self._retiring.append(thread)

    def close(self) -> None:
        """End the process: quit line, SIGTERM, SIGKILL to everything it owns, all reaped; and
        wait for the processes retired before."""
        if self.process is not None:
            self.process.close()
            self._flush_log(wait=0.2)
        self._log = None
        self._handshaken = False
        for thread in self._retiring:
            thread.join(CLOSE_JOIN_S)
        self._retiring.clear()


def close_players(players: Iterable[Player], wait: bool = True) -> None:
    """Close several players at once: every bot is asked to quit before any is waited for, so
    their exits overlap. Without `wait`, they are retired (see `Player.retire`)."""
    players = list(players)
    if not wait:
        for player in players:
            player.retire()
        return
    for player in players:
        player.begin_close()
    for player in players:
        player.close()


def greet(players: dict[int, Player], tc: TimeControl | SeatControls,
          stop: threading.Event | None = None) -> dict[int, Forfeit]:
    """Start (or keep) each player's process and do the handshakes of the new ones, all at once,
    so that each start-up time is measured as it happens; each seat gets the start-up allowance
    of its own time control (`tc`: one for both, or a seat 1, seat 2 pair). Returns the failures
    by seat."""
    controls = dict(zip((1, 2), per_seat(tc), strict=True))
    failures: dict[int, Forfeit] = {}
    for seat, player in players.items():
        try:
            player.prepare()
        except BotIOError as error:
            failures[seat] = Forfeit.from_io(error)
    pending = {seat: p for seat, p in players.items()
               if seat not in failures and not p.handshaken}

    def allowance(seat: int) -> float:
        return (controls[seat].startup_ms + controls[seat].grace_ms) / 1000

    while pending:
        if stop is not None and stop.is_set():
            raise Aborted()
        poller = select.poll()
        for player in pending.values():
            poller.register(player.process.fileno(), select.POLLIN)
        earliest = min(p.process.started_at + allowance(seat) for seat, p in pending.items())
        poller.poll(max(0.0, min(earliest - time.monotonic(), 0.05)) * 1000)
        for seat, player in list(pending.items()):
            if player.hello_due(allowance(seat)):
                del pending[seat]
                try:
                    player.handshake(controls[seat], stop)
                except Forfeit as failure:
                    failures[seat] = failure
    return failures
