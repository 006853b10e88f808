"""Shared by the solver's and the site's tests: Pons' reference positions, games played out by
the exact solver."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.game import PRESETS, Game
from arena.solver.oracle import Oracle

ROOT = Path(__file__).resolve().parents[1]
# shared/ lies beside the project (a clone) or beside its parent folder (a worktree)
REFERENCE = next((p / "shared" / "reference" / "connect4" for p in (ROOT.parent, ROOT.parent.parent)
                  if (p / "shared" / "reference" / "connect4").is_dir()), ROOT / "missing")
SHIPPED = ROOT / "bench" / "data" / "connect4"


def pons_rows(name: str, count: int) -> list[tuple[str, int]]:
    """`count` positions spread over a Pons test set (the shipped sample without shared data)."""
    path = REFERENCE / name if (REFERENCE / name).is_file() else SHIPPED / name
    if not path.is_file():
        pytest.skip(f"Pons' set {name} not found (shared reference data missing)")
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    step = max(1, len(rows) // count)
    return [(moves, int(score)) for moves, score in rows[::step][:count]]


def play_out(oracle: Oracle, prefix: str, blunder_at: int | None = None) -> Game:
    """The classic position `prefix` (1-based column digits) played to the end by perfect moves;
    at ply `blunder_at` the mover plays a move that changes the theoretical outcome instead (if
    it has one)."""
    game = Game(PRESETS["classic"])
    for digit in prefix:
        game.push(int(digit))
    while game.outcome is None:
        value, best = oracle.best_moves(game)
        move = best[0]
        if game.ply == blunder_at:
            worse = [m for m, s in oracle.move_scores(game).items()
                     if (s > 0) - (s < 0) < (value > 0) - (value < 0)]
            move = worse[0] if worse else move
        game.push(move)
    return game
