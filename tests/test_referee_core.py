"""The referee's API: records, time controls, openings, kept processes, logs, stop, threads."""

from __future__ import annotations

import json
import threading
from datetime import datetime

import pytest

from arena.botspec import resolve_bot
from arena.game import PRESETS, Game, parse_move, parse_variant
from arena.referee import GameAborted, GameRecord, Player, TimeControl, play_game
from tests.conftest import MISBEHAVE

TC = TimeControl(move_ms=2000)
ROW_COLUMNS = {
    "game_id", "variant", "first", "second", "result", "winner", "reason", "forfeit_by", "plies",
    "moves", "opening", "move_ms", "move_cpu_ms", "detail", "started_at", "finished_at",
    "first_hash", "second_hash", "first_version", "second_version", "sandboxed",
    "first_tc", "second_tc", "seed", "infos",
}


def replay(rec: GameRecord) -> Game:
    game = Game(parse_variant(rec.variant))
    for token in rec.moves:
        game.push(parse_move(token))
    return game


@pytest.mark.parametrize("spec", ["classic", "popout", "five", "popout-five", "classic:5x4"])
def test_record_is_complete_and_replays(spec, no_leftover_processes):
    variant = parse_variant(spec)
    with Player(resolve_bot("random", ["--seed", "3"])) as a, Player(resolve_bot("greedy")) as b:
        rec = play_game(variant, a, b, TC, game_id="x1")
    row = rec.to_row()
    assert set(row) == ROW_COLUMNS
    assert row["variant"] == variant.spec and row["first"] == "random"
    assert row["second"] == "greedy"
    game = replay(rec)
    assert game.outcome is not None
    assert (rec.winner, rec.reason) == (game.outcome.winner, game.outcome.reason)
    assert rec.result == {1: 1.0, 2: 0.0, None: 0.5}[rec.winner]
    assert rec.plies == len(rec.moves) == len(json.loads(row["move_ms"]))
    assert len(json.loads(row["move_cpu_ms"])) == rec.plies
    assert row["moves"] == " ".join(rec.moves) and row["opening"] == ""
    assert rec.forfeit_by is None and rec.detail == "" and not rec.void
    assert rec.first_version == "1.0" and len(rec.first_hash) == 16
    assert rec.startup_ms[0] is not None and rec.startup_ms[0] > 0


def test_opening_applied_before_bots(no_leftover_processes):
    with Player(resolve_bot("random")) as a, Player(resolve_bot("random")) as b:
        rec = play_game(PRESETS["classic"], a, b, TC, opening=[4, 4, "d3"])
    assert rec.opening == ["d4", "d4", "d3"]
    assert rec.moves[:3] == ["d4", "d4", "d3"]
    assert rec.move_ms[:3] == [0.0, 0.0, 0.0]
    assert rec.first == "random" and rec.second == "random#2"  # distinct display names


def test_clock_time_control(no_leftover_processes):
    tc = TimeControl.from_dict({"base_ms": 5000, "increment_ms": 100})
    assert tc.move_ms is None
    with Player(resolve_bot("greedy")) as a, Player(resolve_bot("random")) as b:
        rec = play_game(PRESETS["popout"], a, b, tc)
    assert rec.forfeit_by is None and rec.time_control["base_ms"] == 5000


def test_clock_runs_out(no_leftover_processes):
    # a bot that never answers after its first move loses on time under a clock too
    tc = TimeControl(move_ms=None, base_ms=400, grace_ms=100, startup_ms=3000)
    with Player(resolve_bot(str(MISBEHAVE), ["never", "--after", "1"])) as a, Player(
        resolve_bot("random")
    ) as b:
        rec = play_game(PRESETS["classic"], a, b, tc)
    assert rec.reason == "timeout" and rec.forfeit_by == 1 and rec.winner == 2


def test_time_control_validation():
    with pytest.raises(ValueError, match="per-move limit"):
        TimeControl(move_ms=None)
    with pytest.raises(ValueError, match="grace_ms"):
        TimeControl(grace_ms=-1)
    with pytest.raises(ValueError, match="unknown key"):
        TimeControl.from_dict({"moves_ms": 3})
    tc = TimeControl(move_ms=500, base_ms=60000, increment_ms=1000)
    assert TimeControl.from_dict(tc.to_dict()) == tc


def test_kept_process_and_restart_every_game(no_leftover_processes):
    variant = PRESETS["classic"]
    with Player(resolve_bot("random")) as a, Player(resolve_bot("random"), "other") as b:
        for i in range(3):
            play_game(variant, a, b, TC) if i % 2 == 0 else play_game(variant, b, a, TC)
        assert (a.starts, b.starts) == (1, 1)
    with Player(resolve_bot("random"), restart_every_game=True) as a, Player(
        resolve_bot("random"), "other"
    ) as b:
        for _ in range(3):
            play_game(variant, a, b, TC)
        assert (a.starts, b.starts) == (3, 1)
        assert not a.running


def test_restart_after_failure(no_leftover_processes):
    variant = PRESETS["classic"]
    with Player(resolve_bot(str(MISBEHAVE), ["crash_mid", "--after", "2"])) as a, Player(
        resolve_bot("random")
    ) as b:
        r1 = play_game(variant, a, b, TC)
        r2 = play_game(variant, a, b, TC)
        assert r1.reason == r2.reason == "crash"
        assert a.starts == 2 and b.starts == 1


def test_stderr_logs_per_game(tmp_path, no_leftover_processes):
    with Player(resolve_bot(str(MISBEHAVE), ["flood_stderr_ok"]), log_dir=tmp_path) as a, Player(
        resolve_bot("random"), log_dir=tmp_path
    ) as b:
        play_game(PRESETS["classic"], a, b, TC, game_id="t-1")
        play_game(PRESETS["classic"], b, a, TC, game_id="t-2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t-1-1-misbehave.log",
                                                          "t-2-2-misbehave.log"]


def test_stop_event_aborts_promptly(no_leftover_processes):
    stop = threading.Event()
    timer = threading.Timer(0.5, stop.set)
    tc = TimeControl(move_ms=30_000)
    with Player(resolve_bot(str(MISBEHAVE), ["never", "--after", "1"])) as a, Player(
        resolve_bot("random")
    ) as b:
        timer.start()
        with pytest.raises(GameAborted):
            play_game(PRESETS["classic"], a, b, tc, stop=stop)
        assert not a.running and not b.running
    timer.cancel()


def test_parallel_games_in_threads(no_leftover_processes):
    results: list[GameRecord] = []
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        try:
            with Player(resolve_bot("random", ["--seed", str(seed)])) as a, Player(
                resolve_bot(str(MISBEHAVE), ["crash_mid", "--after", "1"]) if seed % 2
                else resolve_bot("greedy")
            ) as b:
                for _ in range(3):
                    results.append(play_game(PRESETS["classic"], a, b, TC))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert len(results) == 12
    for rec in results:
        if rec.second.startswith("misbehave"):
            assert rec.reason == "crash" and rec.winner == 1
        else:
            assert rec.forfeit_by is None
            assert replay(rec).outcome is not None


# --- a whole game with CRLF, trailing spaces and an info line at the cap -----------------------

CRLF_BOT = """
import sys
from arena.game import Game, format_move, parse_move
from arena.protocol import LINE_CAP, parse_game_line, parse_turn_line
from arena.sdk import variant_from_setup

out = sys.stdout.buffer
def say(text):
    out.write(text.encode() + b"\\r\\n")
    out.flush()

variant = None
for raw in sys.stdin:
    word = raw.split(" ", 1)[0].strip()
    if word == "hello":
        say("hello name=crlf version=1   ")
    elif word == "game":
        variant = variant_from_setup(parse_game_line(raw.strip()))
    elif word == "turn":
        game = Game(variant)
        for token in parse_turn_line(raw.strip())["moves"]:
            game.push(parse_move(token))
        say("info " + "i" * (LINE_CAP - 5))  # exactly at the cap, then \\r\\n
        say("move\\t" + format_move(game.legal_moves()[0]) + "  ")
        say("info after-the-move")  # same chunk as the move: counts for the next turn
    elif word == "quit":
        break
"""


def test_whole_game_with_a_crlf_bot(tmp_path, no_leftover_processes):
    path = tmp_path / "crlf.py"
    path.write_text(CRLF_BOT)
    tc = TimeControl(move_ms=None, base_ms=60000, increment_ms=100, startup_ms=20000)
    with Player(resolve_bot(str(path))) as a, Player(resolve_bot("random")) as b:
        for i, (first, second) in enumerate(((a, b), (b, a))):
            rec = play_game(parse_variant("classic"), first, second, tc, game_id=f"g{i}")
            assert rec.forfeit_by is None, rec.detail
            assert rec.reason in ("line", "full")
            seat = 1 if first is a else 2
            mine = rec.infos[seat - 1::2]
            assert all(infos[-1] == "i" * 4096 for infos in mine)  # the last line, capped
            assert a.version == "1"
            # wall times of the moves fit in the game (timestamps have ms resolution)
            started = datetime.fromisoformat(rec.started_at.replace("Z", "+00:00"))
            finished = datetime.fromisoformat(rec.finished_at.replace("Z", "+00:00"))
            assert sum(rec.move_ms) <= (finished - started).total_seconds() * 1000 + 2
            assert len(json.loads(rec.to_row()["move_cpu_ms"])) == rec.plies
