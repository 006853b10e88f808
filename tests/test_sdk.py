"""The Python SDK: light import, budgets, and a protocol session driven by hand."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arena.game import PRESETS
from arena.sdk import GameSetup, _budget_ms, run_bot
from tests.conftest import ROOT


def test_import_is_light():
    code = "import sys, arena.sdk; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=30, check=True).stdout.split()
    # dataclasses (with inspect) was a third of an SDK bot's start-up (issue 13)
    for heavy in ("click", "pandas", "numpy", "matplotlib", "tomllib", "subprocess", "json",
                  "rich", "dataclasses", "typing"):
        assert heavy not in out, heavy


def test_cli_import_is_light():
    """Issue 13: importing the entry point pulls in no heavy module (click only on demand)."""
    code = "import sys, arena.cli; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=30, check=True).stdout.split()
    for heavy in ("click", "pandas", "numpy", "matplotlib", "rich", "jinja2", "arena.game"):
        assert heavy not in out, heavy


def setup(move_ms=None, base_ms=None, inc=0) -> GameSetup:
    return GameSetup("g", PRESETS["classic"], 1, move_ms, base_ms, inc, 5000, 200, "x", {})


def test_budget_per_move():
    assert _budget_ms(setup(move_ms=1000), 1000, 0.0, 0) == 850
    assert _budget_ms(setup(move_ms=100), 100, 5.0, 0) == 65
    # a short limit keeps half of it: at 30 ms the whole limit went to the margin (user review)
    assert _budget_ms(setup(move_ms=30), 30, 0.0, 0) == 15
    assert _budget_ms(setup(move_ms=30), 30, 5.0, 0) == 10
    assert _budget_ms(setup(move_ms=2), 2, 5.0, 0) == 1  # never below 1 ms


def test_budget_clock():
    b = _budget_ms(setup(base_ms=60_000, inc=1000), 60_000, 0.0, 0)
    assert b == 60_000 / 21 + 800
    # near the end of the clock: bounded by what is left minus the whole fixed margin (the
    # half kept by short move limits is not for a falling flag: review of the diff)
    assert _budget_ms(setup(base_ms=60_000), 100, 0.0, 40) <= 70
    assert _budget_ms(setup(base_ms=60_000, inc=1000), 40, 0.0, 40) == 10


def test_sdk_session_by_hand():
    bot = ROOT / "bots" / "greedy" / "bot.py"
    lines = [
        "hello protocol=fiar version=1 future=yes",
        "something-new a=b",
        "game id=a seat=1 spec=classic columns=7 rows=6 connect=4 pops=0 fixed=- "
        "start=-/-/-/-/-/-/- cap=168 move_ms=1000 base_ms=0 increment_ms=0 startup_ms=5000 "
        "grace_ms=200 opponent=x",
        "turn ply=6 moves=d1,d7,d1,d7,d1,d7 time_ms=1000 opponent_time_ms=- last_ms=-",
        "end result=win winner=1 reason=line plies=7",
        "game id=b seat=2 spec=custom columns=5 rows=4 connect=3 pops=1 fixed=- "
        "start=-/-/-/-/- cap=80 move_ms=1000 base_ms=0 increment_ms=0 startup_ms=5000 "
        "grace_ms=200 opponent=x",
        "turn ply=3 moves=d1,d5,d2 time_ms=1000 opponent_time_ms=- last_ms=-",
        "quit",
    ]
    out = subprocess.run([sys.executable, str(bot)], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, timeout=30,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["hello name=greedy version=1.0 author=arena",
                                       "move d1", "move d3"]  # win now; then block 1-1-_ (connect 3)


def _session(monkeypatch, lines: list[str], choose, on_read=None, **options) -> list[str]:
    """Run `run_bot` in this process on the given arena lines (`on_read(line)` called as each is
    read; `options` passed on to `run_bot`); returns what it wrote."""
    import io

    pending = iter([(line + "\n").encode() for line in lines])

    class _Buffer:
        def readline(self) -> bytes:
            line = next(pending, b"")
            if on_read is not None and line:
                on_read(line)
            return line

    class _Stdin:
        buffer = _Buffer()

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdin", _Stdin())
    monkeypatch.setattr(sys, "stdout", out)
    run_bot(choose, name="t", **options)
    return out.getvalue().splitlines()


GAME_LINE = ("game id=a seat=1 spec=classic columns=7 rows=6 connect=4 pops=0 fixed=- "
             "start=-/-/-/-/-/-/- cap=168 move_ms=1000 base_ms=0 increment_ms=0 "
             "startup_ms=5000 grace_ms=200 opponent=x")


def test_sdk_applies_only_the_new_moves_each_turn(monkeypatch):
    """Issue 13: a turn parses and pushes the moves since the previous turn, not the game."""
    import arena.sdk as sdk

    parsed = []
    real_parse = sdk.parse_move
    monkeypatch.setattr(sdk, "parse_move", lambda token: parsed.append(token) or real_parse(token))
    # A full 7x6 board filled column by column in an order with no line of four.
    order = [1, 2, 1, 2, 1, 2, 2, 1, 2, 1, 2, 1, 3, 4, 3, 4, 3, 4, 4, 3, 4, 3, 4, 3,
             5, 6, 5, 6, 5, 6, 6, 5, 6, 5, 6, 5, 7, 7, 7, 7, 7]
    tokens = [f"d{c}" for c in order]
    lines = ["hello protocol=fiar version=1", GAME_LINE]
    for ply in range(0, len(tokens), 2):
        moves = ",".join(tokens[:ply]) or "-"
        lines.append(f"turn ply={ply} moves={moves} time_ms=1000 opponent_time_ms=- last_ms=-")
    lines.append("quit")
    seen = []

    def choose(turn):
        seen.append((turn.ply, list(turn.game.moves) == turn.moves, turn.game.ply))
        turn.game.push(turn.game.legal_moves()[0])  # left changed on purpose: must be rebuilt
        return tokens[turn.ply]

    written = _session(monkeypatch, lines, choose)
    assert written[1:] == [f"move {tokens[p]}" for p in range(0, len(tokens), 2)]
    assert all(same and ply == game_ply for ply, same, game_ply in seen)
    assert len(parsed) == len(tokens) - 1  # each move parsed once (the last one is not sent)


def test_sdk_starts_over_when_the_move_list_is_not_a_continuation(monkeypatch):
    lines = ["hello protocol=fiar version=1", GAME_LINE,
             "turn ply=2 moves=d1,d2 time_ms=1000 opponent_time_ms=- last_ms=-",
             "turn ply=2 moves=d4,d4 time_ms=1000 opponent_time_ms=- last_ms=-",
             "turn ply=0 moves=- time_ms=1000 opponent_time_ms=- last_ms=-", "quit"]
    boards = []

    def choose(turn):
        boards.append(turn.game.board_rows()[-1])
        return turn.game.legal_moves()[0]

    _session(monkeypatch, lines, choose)
    assert boards == ["12.....", "...1...", "......."]


class _Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


@pytest.mark.parametrize("turn_arrives_after_s, counts_from", [(0.0, "game"), (0.05, "turn")])
def test_a_first_turn_waiting_behind_a_slow_on_new_game_counts_from_its_start(
        monkeypatch, turn_arrives_after_s, counts_from):
    """The arena sends seat 1's first turn right behind the game line, and its clock runs while
    the bot's on_new_game works (alphabeta's gc.collect took 70-90 ms): that turn's deadline
    counts from when on_new_game began. A turn that arrives later counts from its arrival."""
    import types

    import arena.sdk as sdk

    clock = _Clock()
    monkeypatch.setattr(sdk, "time", types.SimpleNamespace(monotonic=clock.monotonic))
    lines = ["hello protocol=fiar version=1", GAME_LINE,
             "turn ply=0 moves=- time_ms=1000 opponent_time_ms=- last_ms=-", "quit"]

    def on_read(line: bytes) -> None:
        if line.startswith(b"turn"):
            clock.now += turn_arrives_after_s  # how long the read waited for it

    game_read_at = clock.now
    turns = []

    def on_new_game(setup) -> None:
        clock.now += 0.2  # slow work between games

    _session(monkeypatch, lines, lambda turn: turns.append(turn) or 4, on_read=on_read,
             on_new_game=on_new_game)
    (turn,) = turns
    expected = game_read_at if counts_from == "game" else game_read_at + 0.2 + turn_arrives_after_s
    assert turn.received_at == pytest.approx(expected)
    assert turn.deadline == pytest.approx(expected + turn.budget_ms / 1000)


def test_a_move_played_because_choose_move_raised_says_so_in_an_info_line(monkeypatch, capsys):
    """The SDK plays a legal move when the bot's function raises: a bot that raised on every
    move passed `arena check` and a league's submission (review as a new user). An info line
    before such a move says so; `arena check` fails on it (tests/test_check_cli.py)."""
    from arena.sdk import FALLBACK_INFO

    def choose(turn):
        raise ValueError("oops")

    out = _session(monkeypatch, ["hello protocol=fiar version=1", GAME_LINE,
                                 "turn ply=0 moves=- time_ms=1000 opponent_time_ms=- last_ms=-",
                                 "quit"], choose)
    assert out[1:] == [f"info {FALLBACK_INFO} ValueError('oops'); played the first legal move",
                       "move d1"]
    assert "ValueError: oops" in capsys.readouterr().err  # the traceback, for its log


def test_a_rule_the_sdk_does_not_know_is_said_on_stderr(capsys):
    # PROTOCOL.md: a game under other rules names them in its spec, and a bot that does not
    # know them cannot rely on the standard ones; the SDK played them silently (seams review)
    from arena import protocol
    from arena.game import PRESETS
    from arena.sdk import variant_from_setup

    description = PRESETS["classic"].describe()
    line = protocol.game_line("g1", 1, {**description, "spec": "classic,rule=nosuch"},
                              {"move_ms": 1000}, "x")
    variant = variant_from_setup(protocol.parse_game_line(line))
    assert (variant.columns, variant.rows, variant.connect) == (7, 6, 4)
    err = capsys.readouterr().err
    assert "nosuch" in err and "playing the game line's board by the standard rules" in err
    variant_from_setup(protocol.parse_game_line(protocol.game_line(
        "g2", 1, description, {"move_ms": 1000}, "x")))
    assert capsys.readouterr().err == ""
