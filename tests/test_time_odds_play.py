"""Time odds on `arena play` (issue 14, finding 32): each bot keeps its own control in either seat."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

import arena.match as match
from arena.botspec import resolve_bot
from arena.commands.play import command as play_command
from arena.game import parse_variant
from arena.referee import GameRecord, TimeControl
from tests.conftest import ROOT


def test_python_m_arena_play_stores_both_controls_in_every_record(no_leftover_processes):
    out = subprocess.run(
        [sys.executable, "-m", "arena", "play", "random", "greedy", "-n", "2", "--json",
         "--move-ms-a", "700", "--move-ms-b", "1500"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    games = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(g["first"], g["second"]) for g in games] == [("random", "greedy"),
                                                         ("greedy", "random")]
    own = {"random": 700, "greedy": 1500}  # whichever seat the bot takes
    for g in games:
        assert g["first_tc"]["move_ms"] == own[g["first"]]
        assert g["second_tc"]["move_ms"] == own[g["second"]]
        assert g["first_tc"]["startup_ms"] == g["second_tc"]["startup_ms"] == 5000
    assert "time odds: random 700 ms/move, greedy 1500 ms/move" in out.stderr


class _FakePlayer:
    def __init__(self, spec, name, *args, **options):
        self.display_name, self.hello = name, {"name": name}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


@pytest.fixture
def seats_played(monkeypatch) -> list[tuple[str, object]]:
    """Replaces the referee: records (first bot, time control given) and lets seat 1 win."""
    played: list[tuple[str, object]] = []

    def fake_game(variant, first, second, tc, opening, game_id, stop, adjudicate_s=None):
        played.append((first.display_name, tc))
        return GameRecord(game_id, variant.spec, first.display_name, second.display_name,
                          result=1.0, winner=1, reason="line", plies=7,
                          time_control=(tc if isinstance(tc, TimeControl) else tc[0]).to_dict())

    monkeypatch.setattr(match, "Player", _FakePlayer)
    monkeypatch.setattr(match, "play_game", fake_game)
    return played


def test_play_match_gives_each_bot_its_control_in_either_seat(seats_played):
    specs = resolve_bot("random", name="a"), resolve_bot("random", name="b")
    series = [TimeControl(move_ms=100), TimeControl(move_ms=200)]
    result = match.play_match(*specs, [parse_variant("classic")], 2, series,
                              odds=({"move_ms": 50}, {}))
    a50, b100, b200 = TimeControl(move_ms=50), TimeControl(move_ms=100), TimeControl(move_ms=200)
    assert seats_played == [("a", (a50, b100)), ("b", (b100, a50)),
                            ("a", (a50, b200)), ("b", (b200, a50))]
    # the tallies follow the match's time controls, not seat 1's own limit
    assert result.score("classic", 100) == (1, 0, 1) and result.score("classic", 200) == (1, 0, 1)


def test_without_odds_both_seats_get_the_one_control(seats_played):
    specs = resolve_bot("random", name="a"), resolve_bot("random", name="b")
    tc = TimeControl(move_ms=100)
    match.play_match(*specs, [parse_variant("classic")], 2, tc)
    assert [given for _, given in seats_played] == [tc, tc]


def test_a_clock_for_one_bot_drops_the_default_per_move_limit(seats_played):
    result = CliRunner().invoke(play_command, ["random", "greedy", "-n", "2", "--base-ms-a",
                                               "3000", "--increment-ms-a", "20"])
    assert result.exit_code == 0, result.output
    own_a = TimeControl(move_ms=None, base_ms=3000, increment_ms=20)
    assert seats_played[0][1] == (own_a, TimeControl(move_ms=1000))
    assert "time odds: random 3s+0.02s, greedy 1000 ms/move" in result.output


def test_a_bots_own_limit_replaces_the_shared_clock_as_in_a_tournament_file(seats_played):
    """`--base-ms 3000 --increment-ms 20 --move-ms-b 40` gave B both the 40 ms limit and the
    shared clock, where a tournament file's `time = { move_ms = 40 }` gives it 40 ms a move."""
    result = CliRunner().invoke(play_command, ["random", "greedy", "-n", "2", "--base-ms", "3000",
                                               "--increment-ms", "20", "--move-ms-b", "40"])
    assert result.exit_code == 0, result.output
    shared = TimeControl(move_ms=None, base_ms=3000, increment_ms=20)
    assert seats_played[0][1] == (shared, TimeControl(move_ms=40))


@pytest.mark.parametrize("args, status, message", [
    (["--increment-ms-b", "5"], 1, "bot B's time odds: time control: increment_ms needs a clock"),
    (["--move-ms-a", "0"], 2, "Invalid value for '--move-ms-a'"),
])
def test_impossible_odds_are_a_one_line_error(args, status, message):
    result = CliRunner().invoke(play_command, ["random", "greedy", *args])
    assert result.exit_code == status
    assert message in result.output and "Traceback" not in result.output
