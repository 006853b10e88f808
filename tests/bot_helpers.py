"""Helpers shared by the tests of the bundled search bots (alphabeta, mcts)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from arena.game import Game, parse_variant

ROOT = Path(__file__).resolve().parent.parent

# Every preset, odd sizes, other line lengths and short ply caps.
SPECS = [
    "classic", "popout", "five", "popout-five",
    "classic:5x5", "popout:5x4", "classic:9x7", "five:7x5", "popout-five:11x7",
    "classic:8x5,connect=3", "popout:6x6,max-plies=30", "classic:4x4,max-plies=9",
]


def play_game(variant, players, move_s: float = 0.03) -> Game:
    """Play a whole game between two `choose(game, deadline)` players; every move must be legal."""
    game = Game(variant)
    while game.outcome is None:
        player = players[game.ply % 2]
        move = player.choose(game.copy(), time.monotonic() + move_s)
        assert game.is_legal(move), (variant.spec, game.moves, move)
        game.push(move)
    return game


def position(spec: str, moves: str) -> Game:
    """The position after `moves` (engine ints, space-separated) in variant `spec`."""
    game = Game(parse_variant(spec))
    for token in moves.split():
        game.push(int(token))
    return game


def heavy_modules_after_import(bot_folder: Path, *modules: str) -> list[str]:
    """Which heavy packages importing a bot's modules (from its folder) pulls in: should be none."""
    code = (
        f"import sys; sys.path.insert(0, sys.argv[1]); import {', '.join(modules)}; "
        "print(','.join(m for m in ('pandas', 'numpy', 'matplotlib', 'click') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(bot_folder)], capture_output=True,
                         text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    return [name for name in out.stdout.strip().split(",") if name]


def bot_help(script: Path) -> subprocess.CompletedProcess:
    """`script --help` run as the arena runs bots: from its folder, with a minimal environment."""
    return subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                          cwd=script.parent, timeout=60,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
