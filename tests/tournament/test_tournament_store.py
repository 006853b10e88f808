"""The store: one transaction per game, void replacement, consistency checks, readers, export."""

from __future__ import annotations

import json
import sqlite3

import pytest
from tournament_helpers import run_cli

from arena.schema import FRAME_COLUMNS, STORED_COLUMNS
from arena.tournament.export import export_games
from arena.tournament.store import (
    RunLock,
    Store,
    StoreError,
    load_games,
    move_aside,
    read_settings,
)


def row(game_id, result=1.0, **extra):
    base = {
        "game_id": game_id, "variant": "classic", "first": "a", "second": "b", "result": result,
        "winner": None if result in (None, 0.5) else (1 if result == 1 else 2),
        "reason": "line" if result is not None else "handshake", "forfeit_by": None,
        "plies": 3, "moves": "d4 d4 d4", "opening": "", "move_ms": "[1.0, 2.0, 3.0]",
        "move_cpu_ms": [0.5, 0.5, 0.5], "detail": "", "started_at": "2024-01-01T00:00:00Z",
        "finished_at": "2024-01-01T00:00:01Z", "first_hash": "h1", "second_hash": "h2",
        "first_version": "1", "second_version": "2",
    }
    base.update(extra)
    return base


FP = {"time_control": {"move_ms": 100}, "openings_digest": "", "seed": None,
      "bots": {"a": {"command": ["a"], "args": [], "program_hash": "h1"},
               "b": {"command": ["b"], "args": [], "program_hash": "h2"}}}


def test_games_round_trip_with_the_design_columns(tmp_path):
    with Store(tmp_path) as store:
        store.save_settings({"name": "x", "variants": ["classic"]}, FP)
        assert store.add_game(row("g1"), pair_id="p1", round=0) == 1
        assert store.add_game(row("g2", 0.5), pair_id="p1", round=0) == 2
        assert store.finished_ids() == {"g1", "g2"}
        mode = store.conn.execute("PRAGMA journal_mode").fetchone()[0]
        sync = store.conn.execute("PRAGMA synchronous").fetchone()[0]
        assert (mode, sync) == ("wal", 2)
    df = load_games(tmp_path)
    assert list(df.columns) == list(FRAME_COLUMNS)
    assert list(df.seq) == [1, 2]
    assert df.result.tolist() == [1.0, 0.5]
    assert df.winner.isna().tolist() == [False, True]
    assert json.loads(df.move_cpu_ms[0]) == [0.5, 0.5, 0.5]
    assert df.pair_id.tolist() == ["p1", "p1"]


def test_a_finished_game_is_never_stored_twice(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1"))
        with pytest.raises(StoreError):
            store.add_game(row("g1"))
        assert store.game_count() == 1


def test_void_games_are_replayed_and_replaced(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1", None))
        assert store.finished_ids() == set()
        assert store.all_ids() == {"g1"}
        store.add_game(row("g1", 0.0))
        assert store.finished_ids() == {"g1"}
    df = load_games(tmp_path)
    assert len(df) == 1 and df.result[0] == 0.0


def test_void_games_load_as_nan(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1", None))
    df = load_games(tmp_path)
    assert df.result.isna().all()


def test_conflicts_name_what_changed(tmp_path):
    with Store(tmp_path) as store:
        store.save_settings({}, FP)
        assert store.conflicts({**FP, "time_control": {"move_ms": 200}}) == []  # no games yet
        store.add_game(row("g1"))
        assert store.conflicts(FP) == []
        problems = store.conflicts({**FP, "time_control": {"move_ms": 200}})
        assert len(problems) == 1 and "time control" in problems[0] and "200" in problems[0]
        changed = json.loads(json.dumps(FP))
        changed["bots"]["a"]["program_hash"] = "other"
        assert "bot 'a' changed" in store.conflicts(changed)[0]
        changed = json.loads(json.dumps(FP))
        changed["bots"]["b"]["args"] = ["--level", "easy"]
        assert "arguments" in store.conflicts(changed)[0]
        moved = json.loads(json.dumps(FP))
        moved["bots"]["b"]["command"] = ["/other/python", "b"]
        assert store.conflicts(moved) == []  # another interpreter or folder is the same bot
        # a new bot is fine
        more = json.loads(json.dumps(FP))
        more["bots"]["c"] = {"command": ["c"], "args": [], "program_hash": "h3"}
        assert store.conflicts(more) == []


def test_read_settings(tmp_path):
    class Spec:
        command = ["python", "bot.py"]
        args = ("--x",)
        cwd = "/tmp"
        program_hash = "abc"
        version = ""
        author = "me"
        language = "python"

    class Entry:
        name, ref, args, spec = "a", "bots/a", ("--x",), Spec()

    with Store(tmp_path) as store:
        store.save_settings({"name": "t", "variants": ["classic"], "time_control": {"move_ms": 5},
                             "bots": [{"name": "a"}]}, FP)
        store.upsert_bots([Entry()])
        store.set_bot_version("a", "2.1")
        store.add_game(row("g1"))
    info = read_settings(tmp_path)
    assert info["name"] == "t" and info["variants"] == ["classic"]
    assert info["time_control"] == {"move_ms": 5}
    assert info["bots"][0]["command"] == ["python", "bot.py"]
    assert info["bots"][0]["version"] == "2.1" and info["bots"][0]["program_hash"] == "abc"
    assert info["games"] == 1 and info["created_at"] and info["updated_at"]
    assert info["arena_version"]


def test_move_aside_keeps_everything(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1"))
    (tmp_path / "logs" / "x.log").write_text("hello")
    backup = move_aside(tmp_path)
    assert backup is not None and (backup / "games.db").exists()
    assert (backup / "logs" / "x.log").read_text() == "hello"
    assert not (tmp_path / "games.db").exists()
    conn = sqlite3.connect(backup / "games.db")
    assert conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 1
    conn.close()


def test_lock_refuses_a_second_runner(tmp_path):
    with RunLock(tmp_path):
        with pytest.raises(StoreError, match="in use"):
            RunLock(tmp_path).acquire()
    RunLock(tmp_path).acquire()


def test_export_csv_and_jsonl(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1"))
        store.add_game(row("g2", None))
    out = tmp_path / "games.csv"
    assert export_games(tmp_path, "csv", out) == 2
    import pandas as pd

    df = pd.read_csv(out)
    assert list(df.columns) == list(STORED_COLUMNS)
    assert df.result.isna().tolist() == [False, True]
    result = run_cli("export", str(tmp_path), "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["game_id"] for r in records] == ["g1", "g2"]
    assert records[1]["result"] is None and list(records[0]) == list(STORED_COLUMNS)
    assert records[0]["arena_version"] and "round" in records[0]


def test_export_of_a_missing_directory_is_a_one_line_error(tmp_path):
    result = run_cli("export", str(tmp_path / "nope"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "no tournament results" in result.stderr
