"""Contract audit (issues 2-4): names and forms the issues fix, checked through the real command."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from arena.botspec import distinct_names
from arena.game import VariantError, parse_variant

PRESET_LIST = "classic, popout, five, popout-five"


def arena(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], input=stdin, capture_output=True, text=True,
        timeout=timeout,
    )


# --- issue 2: "A bad spec gets an error that names the bad part and lists the presets." --------

@pytest.mark.parametrize(
    ("spec", "part"),
    [
        ("chess", "'chess'"),
        ("classic:3x3", "columns must be between"),
        ("classic:8", "bad size '8'"),
        ("classic:7by6", "bad size '7by6'"),
        ("classic,connect=9", "connect must be between"),
        ("classic,colour=red", "bad option 'colour=red'"),
        ("classic,max-plies=0", "max-plies must be positive"),
        ("", "empty variant spec"),
    ],
)
def test_every_bad_spec_names_the_part_and_lists_the_presets(spec, part):
    with pytest.raises(VariantError) as error:
        parse_variant(spec)
    message = str(error.value)
    assert part in message
    assert message.count(PRESET_LIST) == 1


def test_replay_bad_variant_option_lists_presets_through_the_command():
    result = arena("replay", "--variant", "classic:13", "d1")
    assert result.returncode == 2
    assert "bad size '13'" in result.stderr and PRESET_LIST in result.stderr


def test_replay_json_keys_and_exit_status():
    result = arena("replay", "--json", "popout:8x7: d4 d4 p4", "4453", "classic: d1 d8 d1")
    assert result.returncode == 1
    first, pons, bad = (json.loads(line) for line in result.stdout.splitlines())
    for key in ("variant", "plies", "status", "winner", "reason", "to_move", "legal", "board"):
        assert key in first
    assert first["variant"] == "popout:8x7" and first["plies"] == 3
    assert first["status"] == "ongoing" and first["winner"] is None and first["reason"] is None
    assert first["to_move"] == 2 and "p4" in first["legal"] and len(first["board"]) == 7
    assert pons["plies"] == 4 and pons["board"][-1] == "..211.."
    assert bad["ply"] == 2 and "d8" in bad["error"]


# --- issue 3: `arena play BOT_A BOT_B [--variant SPEC ...] [--games N] [--move-ms MS ...]` -------

def test_play_accepts_several_move_limits_and_plays_the_match_under_each():
    result = arena("play", "greedy", "random", "--variant", "classic:5x4", "--games", "2",
                   "--move-ms", "300", "--move-ms", "400", "--json", timeout=120)
    assert result.returncode == 0, result.stderr
    games = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(games) == 4
    for game in games:
        for key in ("variant", "first", "second", "winner", "reason", "plies", "moves"):
            assert key in game
        assert isinstance(game["moves"], list) and len(game["moves"]) == game["plies"]
    assert [g["time_control"]["move_ms"] for g in games] == [300, 300, 400, 400]
    assert [g["first"] for g in games] == ["greedy", "random", "greedy", "random"]
    assert "classic:5x4 at 300 ms/move: greedy vs random:" in result.stderr
    assert "classic:5x4 at 400 ms/move: greedy vs random:" in result.stderr
    assert "greedy vs random: W " in result.stderr.splitlines()[-1]


def test_play_with_one_move_limit_keeps_the_plain_summary():
    result = arena("play", "greedy", "random", "--variant", "classic:5x4", "--games", "2",
                   "--move-ms", "300", timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and "ms/move" not in result.stdout
    assert lines[-1].startswith("greedy vs random: W ")


# --- issue 3: "Two bots with the same name in one game get distinct display names." ------------

def test_distinct_names_never_collide_with_a_name_already_taken():
    assert distinct_names(["a", "a", "a"]) == ["a", "a#2", "a#3"]
    for names in (["x", "x#2", "x"], ["x#2", "x", "x"], ["x", "x", "x#2"]):
        out = distinct_names(names)
        assert len(set(out)) == len(out), out
