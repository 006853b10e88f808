"""Time odds (issue 14, finding 32): each seat plays under its own time control.

Through the scripted transport (tests/fake_transport.py): no processes, simulated timing.
"""

from __future__ import annotations

import json

import pytest

from arena import protocol
from arena.clocks import GameClocks, TurnBudget
from arena.game import PRESETS
from arena.player import Player
from arena.referee import TimeControl, play_game
from arena.timecontrol import per_seat
from tests.fake_transport import Events, FirstLegal, Reply, factory, spec

FAST = TimeControl(move_ms=300, startup_ms=2000, grace_ms=0)
CLOCK = TimeControl(move_ms=None, base_ms=3000, increment_ms=50, startup_ms=4000, grace_ms=20)


def players(first: FirstLegal, second: FirstLegal, events: Events) -> tuple[Player, Player]:
    return (Player(spec(first.name), transport_factory=factory(first.name, first, events)),
            Player(spec(second.name), transport_factory=factory(second.name, second, events)))


def test_clocks_keep_each_seats_own_control():
    clocks = GameClocks((FAST, CLOCK))
    assert clocks.budget(1, fresh=False) == TurnBudget(300, 0, 0)
    assert clocks.budget(2, fresh=True) == TurnBudget(3000, 4000, 20)
    assert clocks.opponent_time_ms(1) == 3000  # seat 2 has a clock: seat 1 sees it
    assert clocks.opponent_time_ms(2) is None  # seat 1 has none: '-'
    clocks.charge(1, 250.0, clocks.budget(1, fresh=False))
    clocks.charge(2, 4100.0, clocks.budget(2, fresh=True))  # 4000 of it was the start-up
    assert clocks.remaining == {1: None, 2: 3000 - 100 + 50}


def test_one_control_is_both_seats_and_a_bad_pair_is_refused():
    assert per_seat(FAST) == (FAST, FAST)
    assert per_seat([FAST, CLOCK]) == (FAST, CLOCK)
    with pytest.raises(TypeError, match="seat 1, seat 2"):
        per_seat((FAST,))
    with pytest.raises(TypeError, match="seat 1, seat 2"):
        per_seat((FAST, {"move_ms": 5}))


def test_each_seat_is_told_and_timed_by_its_own_control():
    events = Events()
    a, b = players(FirstLegal("a", lambda ply, move: [Reply(f"move {move}", 100)]),
                   FirstLegal("b", lambda ply, move: [Reply(f"move {move}", 20)]), events)
    rec = play_game(PRESETS["classic"], a, b, (FAST, CLOCK), game_id="odds")
    assert rec.forfeit_by is None, rec.detail
    game_a, game_b = events.of("a", "send")[1], events.of("b", "send")[1]
    assert " move_ms=300 base_ms=0 increment_ms=0 startup_ms=2000 grace_ms=0 " in game_a
    assert " move_ms=0 base_ms=3000 increment_ms=50 startup_ms=4000 grace_ms=20 " in game_b
    turns_a = [protocol.parse_turn_line(line) for line in events.of("a", "send")[2:5]]
    turns_b = [protocol.parse_turn_line(line) for line in events.of("b", "send")[2:5]]
    # seat 1: its per-move limit, and seat 2's clock as the opponent's time
    assert [t["time_ms"] for t in turns_a] == [300, 300, 300]
    assert turns_a[0]["opponent_time_ms"] == 3000 and turns_a[1]["opponent_time_ms"] == 3050
    # seat 2: its own clock (the first move is within the start-up allowance, then charged)
    assert turns_b[0]["time_ms"] == 3000 and turns_b[1]["time_ms"] == 3050
    # charged 20 ms and given 50 (3080); up to 40 ms more for a loaded machine's pause between
    # the referee's clock read and the scripted transport's (not charged would be 3100)
    assert 3040 <= turns_b[2]["time_ms"] <= 3080
    assert all(t["opponent_time_ms"] is None for t in turns_b)  # seat 1 has no clock
    assert (rec.first_tc, rec.second_tc) == (FAST.to_dict(), CLOCK.to_dict())
    row = rec.to_row()
    assert json.loads(row["first_tc"])["move_ms"] == 300
    assert json.loads(row["second_tc"])["base_ms"] == 3000


def test_the_same_answer_time_is_late_only_under_the_shorter_limit():
    events = Events()
    answer = lambda ply, move: [Reply(f"move {move}", 0 if ply == 1 else 500)]  # noqa: E731
    slow_long, slow_short = FirstLegal("long", answer), FirstLegal("short", answer)
    a, b = players(slow_long, slow_short, events)
    long_limit = TimeControl(move_ms=1000, startup_ms=2000, grace_ms=0)
    rec = play_game(PRESETS["classic"], a, b, (long_limit, FAST))
    assert (rec.reason, rec.forfeit_by) == ("timeout", 2)
    assert rec.detail == "no move within 300 ms (+0 ms grace)"
    assert rec.plies == 3  # seat 1's 500 ms move was in time under its own 1000 ms


def test_the_handshake_allowance_is_each_seats_own():
    events = Events()

    def hello_after_1s(name: str):
        def respond(line: str) -> list:
            if line.startswith("hello"):
                return [Reply(f"hello name={name}", 1000)]
            return FirstLegal(name)(line)
        return respond

    a = Player(spec("a"), transport_factory=factory("a", hello_after_1s("a"), events))
    b = Player(spec("b"), transport_factory=factory("b", hello_after_1s("b"), events))
    short_start = TimeControl(move_ms=1000, startup_ms=500, grace_ms=0)
    rec = play_game(PRESETS["classic"], a, b, (short_start, CLOCK))
    assert (rec.reason, rec.forfeit_by) == ("handshake", 1)
    assert rec.detail == "no hello answer within 500 ms"


def test_one_control_keeps_working_and_is_stored_for_both_seats():
    events = Events()
    a, b = players(FirstLegal("a"), FirstLegal("b"), events)
    rec = play_game(PRESETS["classic"], a, b, FAST)
    assert rec.first_tc == rec.second_tc == rec.time_control == FAST.to_dict()
