"""A small SDK for Python bots: a bot is a function from a position to a move.

    from arena.sdk import run_bot

    def choose(turn):
        return turn.game.legal_moves()[0]   # an int (+c drop, -c pop) or a token like "d4"

    if __name__ == "__main__":
        run_bot(choose, name="first-legal", version="1.0")

`run_bot` runs the protocol loop (see PROTOCOL.md) on stdin/stdout: it answers the handshake,
rebuilds the variant from the `game` line (no preset names needed), replays the move list of each
`turn` into an `arena.game.Game`, calls `choose_move(turn)` and sends the answer. It ignores lines
it does not know. Exceptions in `choose_move` are printed to stderr and the bot then plays the
first legal move, so that a bug costs a bad move rather than a forfeit; an `info` line before
that move says so (`FALLBACK_INFO`), stored with the game, and `arena check` fails on it. `on_new_game(setup)` runs
at each `game` line; the arena's clock for a first turn sent right behind it runs meanwhile, so
such a turn's `deadline` counts from when `on_new_game` began.

The import is kept light (start-up time counts): only the engine and the protocol module.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from arena import protocol
from arena.botoptions import Option, parse_options
from arena.game import Game, Variant, format_move, parse_move, parse_variant

__all__ = ["GameSetup", "Option", "Turn", "parse_options", "run_bot", "variant_from_setup"]

SAFETY_MIN_MS = 30.0
SAFETY_FRACTION = 0.15
# a `readline` back within this found its line waiting in the pipe
LINE_WAITING_S = 0.001
# The info line sent before a move played because `choose_move` raised (`arena check` looks for it).
FALLBACK_INFO = "sdk: choose_move raised"


class _WireVariant(Variant):
    """A variant rebuilt from the fields of a `game` line, carrying the arena's spec string."""

    __slots__ = ("wire_spec",)

    def __init__(self, *fields: object, wire_spec: str = "") -> None:
        super().__init__(*fields)
        object.__setattr__(self, "wire_spec", wire_spec)

    @property
    def spec(self) -> str:  # type: ignore[override]
        return self.wire_spec or self.name

    def _values(self) -> tuple:
        return (*super()._values(), self.wire_spec)

    def __reduce__(self) -> tuple:
        return (_wire_variant, (super()._values(), self.wire_spec))


def _wire_variant(values: tuple, wire_spec: str) -> _WireVariant:
    return _WireVariant(*values, wire_spec=wire_spec)


def variant_from_setup(setup: dict) -> Variant:
    """The Variant described by a parsed `game` line (see `protocol.parse_game_line`)."""
    spec = setup.get("spec") or ""
    fields = (
        setup["columns"], setup["rows"], setup["connect"], bool(setup["pops"]),
        tuple(setup["fixed"]), tuple(tuple(c) for c in setup["start"]), setup["cap"],
    )
    if spec and spec != "-":
        try:
            known = parse_variant(spec)
        except ValueError as error:
            known = None
            if ",rule=" in spec or ":rule=" in spec:  # PROTOCOL.md: then standard rules are a guess
                print(f"[sdk] {error}: playing the game line's board by the standard rules",
                      file=sys.stderr, flush=True)
        if known is not None and (
            known.columns, known.rows, known.connect, known.pops, known.fixed_columns,
            known.start, known.max_plies,
        ) == fields:
            return known
    name = spec.split(":")[0].split(",")[0] if spec and spec != "-" else "custom"
    return _WireVariant(name, *fields, wire_spec=spec if spec != "-" else "")


class GameSetup:
    """What the `game` line says: the variant, the seat and the time control; `seed`, the game's
    seed (None when the arena sent none): a bot that draws random numbers and seeds them with it
    at each game plays the same game again on every run of a tournament."""

    __slots__ = ("game_id", "variant", "seat", "move_ms", "base_ms", "increment_ms", "startup_ms",
                 "grace_ms", "opponent", "fields", "seed")

    # Plain classes, not dataclasses: `dataclasses` (with `inspect`) cost every SDK bot ~13 ms at
    # each start, a third of its start-up (issue 13).
    def __init__(self, game_id: str, variant: Variant, seat: int, move_ms: int | None,
                 base_ms: int | None, increment_ms: int, startup_ms: int, grace_ms: int,
                 opponent: str, fields: dict, seed: int | None = None) -> None:
        self.game_id = game_id
        self.variant = variant
        self.seat = seat
        self.move_ms = move_ms
        self.base_ms = base_ms
        self.increment_ms = increment_ms
        self.startup_ms = startup_ms
        self.grace_ms = grace_ms
        self.opponent = opponent
        self.fields = fields
        self.seed = seed

    def __repr__(self) -> str:
        return f"GameSetup(game_id={self.game_id!r}, variant={self.variant.spec!r}, seat={self.seat})"


class Turn:
    """Everything about the move to make. `game` is at the current position; the bot may push and
    pop on it (it is rebuilt if left changed)."""

    __slots__ = ("game", "variant", "seat", "ply", "moves", "time_left_ms", "opponent_time_left_ms",
                 "move_ms", "increment_ms", "budget_ms", "deadline", "setup", "received_at")

    def __init__(self, game: Game, variant: Variant, seat: int, ply: int, moves: list[int],
                 time_left_ms: int, opponent_time_left_ms: int | None, move_ms: int | None,
                 increment_ms: int, budget_ms: float, deadline: float, setup: GameSetup,
                 received_at: float) -> None:
        self.game = game
        self.variant = variant
        self.seat = seat
        self.ply = ply
        self.moves = moves
        self.time_left_ms = time_left_ms
        self.opponent_time_left_ms = opponent_time_left_ms
        self.move_ms = move_ms
        self.increment_ms = increment_ms
        self.budget_ms = budget_ms
        self.deadline = deadline
        self.setup = setup
        self.received_at = received_at

    def __repr__(self) -> str:
        return f"Turn(ply={self.ply}, seat={self.seat}, budget_ms={self.budget_ms:.0f})"

    def info(self, text: str) -> None:
        """Send an `info` line (recorded by the arena with this move, size-capped)."""
        _write("info " + " ".join(str(text).split()))

    def time_left(self) -> float:
        """Seconds left until `deadline`."""
        return self.deadline - time.monotonic()


def _write(line: str) -> None:
    out = sys.stdout
    out.write(line + "\n")
    out.flush()


def _fixed_margin(limit: float) -> float:
    """The fixed part of the safety margin: SAFETY_MIN_MS, but at most half of a short limit
    (at 30 ms a move the whole limit went to the margin, and SDK bots thought for 1 ms)."""
    return min(SAFETY_MIN_MS, limit / 2)


def _budget_ms(setup: GameSetup, time_left: int, slack: float, ply: int) -> float:
    budgets = []
    # a clock near its end keeps the whole fixed margin (its flag falls for good); a move limit
    # is the same every move, and short ones keep half of themselves for the bot
    fixed = SAFETY_MIN_MS if setup.base_ms is not None else _fixed_margin(time_left)
    if setup.move_ms is not None:
        margin = max(_fixed_margin(setup.move_ms), SAFETY_FRACTION * setup.move_ms)
        budgets.append(setup.move_ms - margin - slack)
    if setup.base_ms is not None:
        variant = setup.variant
        moves_left = max(10.0, (variant.cells - ply) / 2)
        budget = time_left / moves_left + 0.8 * setup.increment_ms
        ceiling = time_left - max(fixed, 2 * slack) - slack
        budgets.append(min(budget, ceiling))
    budgets.append(time_left - max(fixed, slack) - slack)
    return max(1.0, min(budgets))


class _Position:
    """The game so far, kept between turns: each `turn` line's move list normally extends the
    previous one, so only the new tokens are parsed and pushed (not the whole game per move)."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.game = Game(variant)
        self.text = ""  # the `moves=` text that `game` is at ("" for no moves)
        self.moves: list[int] = []

    def advance(self, text: str) -> list[int]:
        """Bring the game to the `moves=` text; returns every move so far."""
        if text == "-":
            text = ""
        known = self.text
        if known and not (text.startswith(known) and text[len(known):len(known) + 1] in ("", ",")):
            self.reset()  # not a continuation (a new line of play): start over
            known = ""
        elif self.game.moves != self.moves:  # the bot left the game changed: rebuild it
            self.game = Game(self.variant)
            for move in self.moves:
                self.game.push(move)
        tail = text[len(known):].lstrip(",")
        if tail:
            for token in tail.split(","):
                move = parse_move(token)
                self.game.push(move)
                self.moves.append(move)
        self.text = text
        return self.moves

    def reset(self) -> None:
        self.game = Game(self.variant)
        self.text = ""
        self.moves = []


def _turn_fields(line: str) -> tuple[str, int, int | None, int | None]:
    """(moves text, time_ms, opponent_time_ms, last_ms) of a `turn` line, without splitting the
    move list (it grows with the game)."""
    fields = dict(word.partition("=")[::2] for word in line.split()[1:])
    try:
        opponent = fields.get("opponent_time_ms", "-")
        last = fields.get("last_ms", "-")
        return (fields.get("moves", "-"), int(fields["time_ms"]),
                None if opponent in ("-", "") else int(opponent),
                None if last in ("-", "") else int(last))
    except (KeyError, ValueError) as error:
        raise protocol.ProtocolError(f"bad turn line ({error}): {protocol.truncate(line)!r}") \
            from None


def reseed(rng, setup: GameSetup, own_seed: int | None = None) -> None:
    """Seed `rng` (a `random.Random`) for the game `setup` starts from the arena's game seed and
    the bot's own `--seed`, so that the game's draws do not depend on the games its process
    played before (which move with a tournament's concurrency): the tournament then replays the
    same games on every run. Nothing when the arena sent no seed (`arena play`): `rng` goes on."""
    if setup.seed is not None:
        rng.seed(f"{own_seed}/{setup.seed}")


def run_bot(
    choose_move: Callable[[Turn], int | str],
    name: str,
    version: str = "",
    author: str = "",
    on_new_game: Callable[[GameSetup], None] | None = None,
) -> None:
    """Run the protocol loop until `quit` or the end of input."""
    stdin = sys.stdin.buffer
    setup: GameSetup | None = None
    position: _Position | None = None
    slack = 0.0  # arena-measured time minus our own, for the previous move
    own_last_ms: float | None = None
    busy_since: float | None = None  # when a slow on_new_game began
    while True:
        asked = time.monotonic()
        raw = stdin.readline()
        if not raw:
            return
        received = time.monotonic()
        if busy_since is not None:
            # the arena sends a first turn right behind the game line: a line that was there at
            # once may have waited for on_new_game, and counts from when that began (the
            # arena's clock ran meanwhile)
            if received - asked < LINE_WAITING_S:
                received = busy_since
            busy_since = None
        line = raw.decode("utf-8", "replace").strip()
        word = line.split(" ", 1)[0]
        if word == "turn":
            if setup is None or position is None:
                continue
            moves_text, time_ms, opponent_ms, last_ms = _turn_fields(line)
            if last_ms is not None and own_last_ms is not None:
                measured = last_ms - own_last_ms
                slack = max(0.0, 0.7 * slack + 0.3 * measured) if slack else max(0.0, measured)
            moves = position.advance(moves_text)
            game = position.game
            budget = _budget_ms(setup, time_ms, slack, len(moves))
            turn = Turn(
                game=game, variant=setup.variant, seat=setup.seat, ply=len(moves),
                moves=list(moves), time_left_ms=time_ms, opponent_time_left_ms=opponent_ms,
                move_ms=setup.move_ms, increment_ms=setup.increment_ms, budget_ms=budget,
                deadline=received + budget / 1000, setup=setup, received_at=received,
            )
            try:
                move = choose_move(turn)
                token = format_move(move) if isinstance(move, int) else str(move).strip()
            except Exception as error:  # a bug in the bot: play something legal instead
                import traceback

                traceback.print_exc(file=sys.stderr)
                name = getattr(choose_move, "__name__", "the move function")
                print(f"[sdk] {name} failed ({error!r}); playing a legal move",
                      file=sys.stderr, flush=True)
                _write(f"info {FALLBACK_INFO} {error!r}"[:200] + "; played the first legal move")
                position.advance(moves_text)  # rebuilds the game if the bot left it changed
                token = format_move(position.game.legal_moves()[0])
            _write("move " + token)
            own_last_ms = (time.monotonic() - received) * 1000
        elif word == "game":
            fields = protocol.parse_game_line(line)
            setup = GameSetup(
                game_id=fields["id"], variant=variant_from_setup(fields), seat=fields["seat"],
                move_ms=fields["move_ms"], base_ms=fields["base_ms"],
                increment_ms=fields["increment_ms"], startup_ms=fields["startup_ms"],
                grace_ms=fields["grace_ms"], opponent=fields["opponent"], fields=fields,
                seed=fields["seed"],
            )
            position = _Position(setup.variant)
            if on_new_game is not None:
                on_new_game(setup)
                if time.monotonic() - received > LINE_WAITING_S:
                    busy_since = received
        elif word == "hello":
            _write(protocol.hello_reply(name, version, author))
        elif word == "quit":
            return
        # `end` and unknown lines: nothing to do
