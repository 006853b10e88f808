"""Shared by the solver's and the site's tests: games played out by the exact solver."""

from __future__ import annotations

from arena.game import PRESETS, Game
from arena.solver.oracle import Oracle


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
