"""`arena play` end to end with real bot processes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from arena.commands.play import command as play_command
from arena.game import Game, parse_move, parse_variant
from tests.conftest import ROOT


def invoke(*args: str):
    return CliRunner().invoke(play_command, list(args), catch_exceptions=False)


def test_play_json_games_alternate_and_replay(no_leftover_processes):
    result = invoke("random", "greedy", "-v", "classic", "-v", "popout-five", "-n", "2", "--json")
    assert result.exit_code == 0, result.output
    games = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(games) == 4
    assert [(g["first"], g["second"]) for g in games] == [("random", "greedy"),
                                                         ("greedy", "random")] * 2
    for g in games:
        assert {"variant", "first", "second", "winner", "reason", "plies", "moves"} <= set(g)
        game = Game(parse_variant(g["variant"]))
        for token in g["moves"]:
            game.push(parse_move(token))
        assert game.outcome is not None and g["plies"] == len(g["moves"])
        assert g["winner"] in (None, g["first"], g["second"])
    assert "random vs greedy: W" in result.stderr


def test_play_text_output_and_summary(no_leftover_processes):
    result = invoke("greedy", "greedy", "-n", "2", "--restart-every-game")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("g0001 classic: greedy (1) vs greedy#2 (2): ")
    assert lines[-1].startswith("greedy vs greedy#2: W ")


@pytest.mark.parametrize(
    "args,message",
    [
        (["nosuchbot", "random"], "no bot at 'nosuchbot'"),
        (["random", "random", "-v", "nosuch"], "unknown preset"),
        (["random", "random", "--opening", "d9"], "column"),
        (["random", "random", "--grace-ms", "-3"], "-3"),
    ],
)
def test_bad_input_is_one_line_error(args, message):
    result = CliRunner().invoke(play_command, args)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_bad_manifest(tmp_path):
    (tmp_path / "bot.toml").write_text("name = 'x'\ncommand = 3\n")
    result = CliRunner().invoke(play_command, [str(tmp_path), "random"])
    assert result.exit_code == 1 and "'command' must be" in result.output


def test_cli_entry_point_runs(no_leftover_processes):
    out = subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main()", "play", "random", "random",
         "-n", "1"], capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert "W " in out.stdout


@pytest.mark.skipif(shutil.which("awk") is None or shutil.which("sh") is None,
                    reason="needs sh and awk")
def test_awk_bot_plays_legal_moves_in_every_preset(no_leftover_processes):
    result = invoke("awk", "random", "-v", "classic", "-v", "popout", "-v", "five",
                    "-v", "popout-five", "-n", "2", "--json")
    assert result.exit_code == 0, result.output
    games = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(games) == 8
    assert all(g["forfeit_by"] is None for g in games), [g["detail"] for g in games]


def test_play_sprt_stops_the_match_once_decided(no_leftover_processes):
    # greedy beats random nearly always: H1 (greedy +200 Elo) is accepted long before 60 games.
    result = invoke("greedy", "random", "-n", "60", "--move-ms", "2000", "--sprt", "0,200", "--json")
    assert result.exit_code == 0, result.output
    games = [json.loads(line) for line in result.stdout.splitlines()]
    assert 4 <= len(games) < 60
    assert len(games) % 2 == 0  # stops only after a full seat-swapped pair
    assert "-> H1" in result.stderr and f"after {len(games)} games" in result.stderr


def test_play_sprt_rejects_bad_bounds():
    result = CliRunner().invoke(play_command, ["random", "random", "--sprt", "50,0"])
    assert result.exit_code == 2 and "elo0 < elo1" in result.output
    result = CliRunner().invoke(play_command, ["random", "random", "--sprt", "fifty"])
    assert result.exit_code == 2 and "ELO0,ELO1" in result.output
