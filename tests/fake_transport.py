"""A scripted stand-in for a bot process, so the protocol and the referee run without processes.

As python-chess's `MockTransport`: a test says how the bot answers each line it is sent, and the
transport records everything the arena did. Answers may come late in simulated time
(`Reply(text, after_ms)`): a reply is due `after_ms` after the line that caused it was sent, and
the transport judges it against the reader's deadline exactly as `LineReader` does, without
waiting.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from arena.boterrors import BotExited, BotStartError, BotTimeout
from arena.botspec import BotSpec
from arena.game import Game, format_move, parse_move
from arena.protocol import parse_game_line, parse_turn_line
from arena.sdk import variant_from_setup


@dataclass(frozen=True)
class Reply:
    text: str
    after_ms: float = 0.0


@dataclass(frozen=True)
class Stderr:
    """An answer written to stderr instead of stdout (at once)."""

    data: bytes


@dataclass
class Events:
    """What the arena did to the fake bots, in order: (bot name, action, argument)."""

    log: list[tuple[str, str, str]] = field(default_factory=list)

    def of(self, name: str, action: str | None = None) -> list[str]:
        return [arg for who, what, arg in self.log
                if who == name and (action is None or what == action)]


Responder = Callable[[str], Iterable[str | Reply | Stderr]]


class FakeTransport:
    """Implements `arena.player.Transport` from a responder: line sent -> lines answered."""

    def __init__(self, name: str, respond: Responder, events: Events,
                 fail_start: bool = False, stderr: bytes = b"") -> None:
        self.name = name
        self.respond = respond
        self.events = events
        self.fail_start = fail_start
        self.stderr = stderr
        self.started_at = 0.0
        self.last_line_at = 0.0
        self.closed = False
        self.exited = False  # the fake bot "exited" (its responder raised SystemExit)
        self._queue: deque[tuple[float, str]] = deque()
        self._ready_r = self._ready_w = -1
        self._quit_sent = False
        self.frozen = False
        self.followed: int | None = None  # the core `follow_cpu` last named

    def _record(self, action: str, arg: str = "") -> None:
        self.events.log.append((self.name, action, arg))

    def start(self) -> None:
        self._record("start")
        if self.fail_start:
            self.closed = True
            raise BotStartError(f"cannot start {self.name!r}: No such file or directory")
        self.started_at = time.monotonic()
        # the referee waits on a file descriptor for hello answers: one that is always readable
        self._ready_r, self._ready_w = os.pipe()
        os.write(self._ready_w, b"x")

    def send(self, line: str, deadline: float | None = None) -> None:
        if self.exited or self.closed:
            raise BotExited(f"bot exited with code 0 ({self.name})")
        self._record("send", line)
        sent_at = time.monotonic()
        try:
            answers = list(self.respond(line))
        except SystemExit:
            self.exited = True
            return
        for answer in answers:
            if isinstance(answer, Stderr):
                self.stderr += answer.data
                continue
            reply = answer if isinstance(answer, Reply) else Reply(answer)
            self._queue.append((sent_at + reply.after_ms / 1000, reply.text))

    def read_line(self, deadline: float, stop: threading.Event | None = None) -> str:
        if not self._queue:
            if self.exited:
                raise BotExited("bot exited with code 0")
            raise BotTimeout("no answer in time")  # nothing will ever come
        arrival, text = self._queue[0]
        if arrival > deadline:
            raise BotTimeout("no answer in time")
        self._queue.popleft()
        self.last_line_at = arrival
        return text

    def pending_lines(self) -> list[str]:
        now = time.monotonic()
        lines = []
        while self._queue and self._queue[0][0] <= now:
            lines.append(self._queue.popleft()[1])
        return lines

    def ready(self) -> bool:
        return bool(self._queue) or self.exited

    def fileno(self) -> int:
        return self._ready_r

    def cpu_ms(self) -> float:
        return 0.0

    def take_stderr(self, wait: float = 0.0) -> tuple[bytes, int]:
        data, self.stderr = self.stderr, b""
        return data, 0

    def stderr_last_line(self, wait: float = 0.0) -> str:
        lines = [line.strip() for line in self.stderr.decode().splitlines() if line.strip()]
        return lines[-1] if lines else ""

    @property
    def alive(self) -> bool:
        return not self.closed and not self.exited

    def begin_close(self, quit_line: str | None = "quit") -> None:
        self.thaw()  # as the real one: a stopped bot reads no quit line
        if not self.closed and not self._quit_sent and quit_line is not None:
            self._quit_sent = True
            self._record("quit")

    def close(self, quit_line: str | None = "quit") -> None:
        if self.closed:
            return
        self.begin_close(quit_line)
        self.closed = True
        self._record("close")
        for fd in (self._ready_r, self._ready_w):
            if fd >= 0:
                os.close(fd)
        self._ready_r = self._ready_w = -1

    def kill(self) -> None:
        if not self.closed:
            self._record("kill")
        self.close(None)

    def freeze(self) -> None:
        if not self.frozen:
            self.frozen = True
            self._record("freeze")

    def thaw(self) -> None:
        if self.frozen:
            self.frozen = False
            self._record("thaw")

    def follow_cpu(self, cpu: int) -> None:
        self.followed = cpu  # not an event: the games' transcripts stay as the bot saw them


def factory(name: str, respond: Responder, events: Events, **options) -> Callable[[BotSpec],
                                                                                  FakeTransport]:
    """A `transport_factory` for `Player`: every process it starts answers with `respond`."""
    return lambda spec: FakeTransport(name, respond, events, **options)


def spec(name: str) -> BotSpec:
    return BotSpec(name, ["/nonexistent/fake-bot"], Path.cwd(), "fakehash00000000",
                   version="0.9")


class FirstLegal:
    """A well-behaved bot: greets, follows the game line, plays the first legal move.

    `on_turn(ply, move) -> answers` may replace the answer of a turn (misbehaviour scripts).
    """

    def __init__(self, name: str = "fake", on_turn: Callable[[int, str], Iterable] | None = None,
                 version: str = "1.0") -> None:
        self.name = name
        self.version = version
        self.on_turn = on_turn
        self.variant = None
        self.turns: list[dict] = []

    def __call__(self, line: str) -> list[str | Reply]:
        word = line.split(" ", 1)[0]
        if word == "hello":
            return [f"hello name={self.name} version={self.version}"]
        if word == "game":
            self.variant = variant_from_setup(parse_game_line(line))
        elif word == "turn":
            turn = parse_turn_line(line)
            self.turns.append(turn)
            game = Game(self.variant)
            for token in turn["moves"]:
                game.push(parse_move(token))
            move = format_move(game.legal_moves()[0])
            if self.on_turn is not None:
                return list(self.on_turn(len(self.turns), move))
            return [f"move {move}"]
        return []
