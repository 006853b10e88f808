"""`arena replay --moves / --ply / --protocol`: why a bot lost a game, and its position fed back
to it by hand. No processes: games are played by scripted bots (tests/fake_transport.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena import protocol
from arena.commands.play import _game_dict
from arena.game import PRESETS, Game, parse_move
from arena.player import Player, log_file_name
from arena.referee import TimeControl, play_game
from arena.replay_detail import bot_input, forfeit_line, log_paths, ply_rows
from arena.replay_text import ReplayInputError, ReplayUsageError, run
from tests.fake_transport import Events, FirstLegal, Reply, factory, spec

# a clock on one seat and a per-move limit on the other; no start-up allowance, so that every
# move is charged as a kept process's (what the rebuilt clocks assume); the scripted bots' whole
# milliseconds put the clocks where truncating an unrounded charge loses one (a CI run's failure)
CLOCK = TimeControl(move_ms=None, base_ms=2000, increment_ms=50, startup_ms=0, grace_ms=100)
LIMIT = TimeControl(move_ms=300, startup_ms=0, grace_ms=100)


def _players(first: FirstLegal, second: FirstLegal, events: Events) -> tuple[Player, Player]:
    return (Player(spec(first.name), transport_factory=factory(first.name, first, events)),
            Player(spec(second.name), transport_factory=factory(second.name, second, events)))


def _game(record) -> Game:
    game = Game(PRESETS[record.variant])
    for token in record.moves:
        game.push(parse_move(token))
    return game


def test_the_turn_lines_rebuilt_from_a_stored_game_are_the_ones_the_bots_were_sent():
    events = Events()
    a, b = _players(FirstLegal("a", lambda ply, move: [f"info depth {ply}",
                                                        Reply(f"move {move}", 37 * ply)]),
                    FirstLegal("b", lambda ply, move: [Reply(f"move {move}", 11)]), events)
    rec = play_game(PRESETS["classic"], a, b, (CLOCK, LIMIT), opening=["d1"], game_id="g7")
    stored = json.loads(json.dumps(_game_dict(rec)))  # as `arena play --json` writes it
    sent = {1: [line for line in events.of("a", "send") if line.startswith("turn ")],
            2: [line for line in events.of("b", "send") if line.startswith("turn ")]}
    game_lines = {1: events.of("a", "send")[1], 2: events.of("b", "send")[1]}
    full = _game(rec)
    for ply in range(len(rec.opening), rec.plies):
        game = Game(full.variant)
        for move in full.moves[:ply]:
            game.push(move)
        seat = game.to_move
        hello, game_line, turn, quit_line = bot_input(game, stored)
        assert (hello, quit_line) == (protocol.hello_line(), protocol.QUIT_LINE)
        assert game_line == game_lines[seat]
        assert turn == sent[seat][(ply - len(rec.opening)) // 2], ply


def test_the_game_line_rebuilt_carries_the_games_seed():
    # a tournament's game line tells the bots its seed: a bot that reseeds from it draws what it
    # drew in the game only if it is given it again (it had been left out of --protocol)
    events = Events()
    a, b = _players(FirstLegal("a", lambda ply, move: [Reply(f"move {move}", 5)]),
                    FirstLegal("b", lambda ply, move: [Reply(f"move {move}", 5)]), events)
    rec = play_game(PRESETS["classic"], a, b, LIMIT, game_id="g9", seed=123456789)
    sent = {1: events.of("a", "send")[1], 2: events.of("b", "send")[1]}
    assert sent[1].endswith(" seed=123456789")
    stored = json.loads(json.dumps(_game_dict(rec)))
    full = _game(rec)
    for ply, seed in ((0, 123456789), (1, 123456789.0)):  # a games file reads it as a float
        game = Game(full.variant)
        for move in full.moves[:ply]:
            game.push(move)
        assert bot_input(game, {**stored, "seed": seed})[1] == sent[game.to_move]
    unseeded = bot_input(Game(full.variant), {**stored, "seed": float("nan")})[1]
    assert "seed=" not in unseeded



def test_the_ply_rows_carry_each_moves_times_and_info_and_the_opening_is_the_arenas():
    events = Events()
    a, b = _players(FirstLegal("a", lambda ply, move: [f"info depth {ply}", f"move {move}"]),
                    FirstLegal("b"), events)
    rec = play_game(PRESETS["classic"], a, b, LIMIT, opening=["d4", "d3"], game_id="g1")
    rows = ply_rows(_game(rec), _game_dict(rec))
    assert [r["by"] for r in rows[:4]] == ["opening", "opening", "a", "b"]
    assert rows[0]["ms"] is None and rows[0]["time_ms"] is None
    assert rows[2]["info"] == "depth 1" and rows[2]["time_ms"] == 300
    assert rows[2]["ms"] is not None and rows[2]["cpu_ms"] is not None


def test_a_forfeit_is_said_with_its_seat_ply_and_detail():
    row = {"first": "x", "second": "crashy", "reason": "crash", "forfeit_by": 2.0, "result": 1.0,
           "plies": 3, "detail": "bot exited with code 1; stderr: KeyError: 'boom'"}
    assert forfeit_line(row) == ("seat 2 (crashy) forfeits in its turn at ply=3: crash: bot "
                                 "exited with code 1; stderr: KeyError: 'boom'")
    assert forfeit_line({**row, "reason": "line", "forfeit_by": float("nan")}) == ""


def test_log_paths_are_the_referees_file_names(tmp_path: Path):
    row = {"game_id": "gabc", "first": "a b", "second": "c"}
    (tmp_path / log_file_name("gabc", 2, "c")).write_text("trace\n")
    assert log_paths(tmp_path, row) == [("c", tmp_path / "gabc-2-c.log")]
    assert log_paths(None, row) == []


def test_nobody_is_to_move_in_a_finished_game():
    game = Game(PRESETS["classic"])
    for token in "d1 d2 d1 d2 d1 d2 d1".split():
        game.push(parse_move(token))
    with pytest.raises(ValueError, match="over after 7 plies.*--ply"):
        bot_input(game, None)


def _games_file(tmp_path: Path) -> Path:
    events = Events()
    a, b = _players(FirstLegal("a"), FirstLegal("b", lambda ply, move: (
        [f"move {move}"] if ply < 3 else [Reply("move d9", 5)])), events)
    rec = play_game(PRESETS["classic"], a, b, LIMIT, game_id="g0001")
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(_game_dict(rec)) + "\n")
    return path


def test_replay_moves_lists_the_plies_and_the_forfeit(tmp_path: Path):
    out: list[str] = []
    path = _games_file(tmp_path)
    assert run("classic", False, [str(path), "g0001"], out.append, moves=True) == 0
    text = "\n".join(out)
    assert "ply  move  by" in text and "time_ms" in text
    assert "seat 2 (b) forfeits in its turn at ply=5: illegal" in text  # d9: no such column


def test_replay_ply_and_protocol_feed_the_position(tmp_path: Path):
    path = _games_file(tmp_path)
    out: list[str] = []
    assert run("classic", False, [str(path)], out.append, ply=2, feed=True) == 0
    assert out[0] == protocol.hello_line() and out[-1] == "quit"
    assert out[1].startswith("game id=g0001 seat=1 ") and " opponent=b" in out[1]
    assert out[2].startswith("turn ply=2 moves=d1,d1 time_ms=300 opponent_time_ms=- last_ms=")
    out.clear()
    assert run("classic", False, ["d4 d4 d3"], out.append, ply=1) == 0
    assert "ongoing after 1 plies, player 2 to move" in out[0]
    with pytest.raises(ReplayInputError, match="--ply 9 is past the end"):
        run("classic", False, ["d4 d4"], out.append, ply=9)
    with pytest.raises(ReplayInputError, match="one position.*2 games"):
        run("classic", False, ["d4", "d5"], out.append, feed=True)
    with pytest.raises(ReplayUsageError, match="--protocol"):
        run("classic", True, ["d4"], out.append, feed=True)
