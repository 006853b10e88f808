"""End to end: the ladder's bots play real games through `arena play` (subprocesses, protocol)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

if importlib.util.find_spec("arena.commands.play") is None:
    pytest.skip("`arena play` (arena.commands.play) is not there yet", allow_module_level=True)


def play(bot_a: str, bot_b: str, variant: str, games: int, move_ms: int = 60) -> list[dict]:
    # The bots aim at `move_ms`; the grace is wide because these tests check clean games, not
    # clocks, and the suite runs one test per core: a busy core can hold a bot back for a few
    # hundred ms (a hung bot still forfeits, after about 2 s).
    out = subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main()", "play", bot_a, bot_b,
         "--variant", variant, "--games", str(games), "--move-ms", str(move_ms),
         "--grace-ms", "2000", "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )
    records = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(records) == games, out.stdout + out.stderr
    return records


@pytest.mark.parametrize("variant", ["classic", "popout", "five", "popout-five",
                                     "classic:5x5", "popout:7x5", "five:11x7"])
def test_strong_bots_play_clean_games(variant):
    bots = [str(ROOT / "bots" / "alphabeta"), str(ROOT / "bots" / "mcts")]
    for record in play(*bots, variant, 2):
        assert record["reason"] in ("line", "full", "empty", "repetition", "max-plies"), record
        assert record["forfeit_by"] is None, record


@pytest.mark.parametrize("variant", ["classic", "popout"])
def test_alphabeta_beats_random(variant):
    records = play(str(ROOT / "bots" / "alphabeta"), str(ROOT / "bots" / "random"), variant, 2)
    assert all(r["winner"] == "alphabeta" for r in records), records


def test_levels_are_selected_on_the_command_line():
    out = subprocess.run(
        [sys.executable, str(ROOT / "bots" / "alphabeta" / "alphabeta.py"), "--level", "nope"],
        capture_output=True, text=True, cwd=ROOT / "bots" / "alphabeta", timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode != 0 and "easy" in out.stderr
