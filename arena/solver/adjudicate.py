"""Solver adjudication: the proven result of a game in progress, like tablebase adjudication in
chess. Pure: the referee decides when to ask and records the game with reason `adjudicated`.

    verdict = adjudicate(game, budget_s=0.05)
    if verdict is not None:      # the result with perfect play from here on is proven
        ... end the game: verdict.winner (1, 2 or None for a draw), verdict.result (seat 1's score)

Only positions of a variant the exact solver handles (`arena.solver.scope.solvable`) are
adjudicated, and only when the solve fits in the budget; otherwise the answer is None and the
game goes on. One solver (and its table, 64 MiB) is kept per variant and reused, so that
asking after every move costs little once the positions get solvable.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.game import Game, Variant, first_player_score
from arena.solver.oracle import Oracle
from arena.solver.scope import solvable

_ORACLES: dict[Variant, Oracle] = {}


@dataclass(frozen=True)
class Verdict:
    """A proven result: `winner` 1, 2 or None (draw); `result` the score of seat 1."""

    winner: int | None
    result: float
    ply: int  # the ply at which it was proven


def oracle_for(variant: Variant) -> Oracle | None:
    """The shared oracle of `variant` (None when the solver cannot handle it)."""
    if not solvable(variant):
        return None
    oracle = _ORACLES.get(variant)
    if oracle is None:
        oracle = _ORACLES[variant] = Oracle(variant)
    return oracle


def adjudicate(game: Game, budget_s: float = 0.05) -> Verdict | None:
    """The proven result of `game` (not over) with perfect play from here, or None when its
    variant is not solvable, the game is already over, or no proof fits in `budget_s` seconds."""
    if game.outcome is not None:
        return None
    oracle = oracle_for(game.variant)
    if oracle is None:
        return None
    value = oracle.timed(oracle.weak_score, game, budget_s)
    if value is None:
        return None
    if value == 0:
        return Verdict(None, 0.5, game.ply)
    winner = game.to_move if value > 0 else 3 - game.to_move
    return Verdict(winner, first_player_score(winner), game.ply)
