"""The perfect bot's move choice: book, then exact solving under a node budget, then search.

In a variant the exact solver handles (`arena.solver.oracle.solvable`, classic 7x6 among them) it
plays the move of the best exact score: the fastest win, else a draw, else the slowest loss, the
centre-most column among equals. When the solve does not fit in the time of the move (early
positions outside the book), and in every other variant, it plays the move of the alphabeta bot's
search (bots/alphabeta, level hard) in the time left, and says so in an `info` line.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "alphabeta"))

from player import AlphaBetaPlayer  # bots/alphabeta

from arena.solver import kernel
from arena.solver.oracle import Oracle, solvable

# Share of the move's budget given to the exact solve; the rest is kept for the fallback search.
EXACT_SHARE = 0.75


class PerfectPlayer:
    """Keeps the solver's tables (one per variant) between moves and games."""

    def __init__(self, variant) -> None:
        self.variant = variant
        # without numba the solver is far too slow to play in time: search only
        self.exact = solvable(variant) and kernel.COMPILED
        self.oracle = Oracle(variant) if self.exact else None
        self.fallback: AlphaBetaPlayer | None = None
        self.last: str = ""  # what the last move was based on (for the `info` line)

    def new_game(self) -> None:
        if self.fallback is not None:
            self.fallback.new_game()

    def choose(self, game, deadline: float) -> int:
        """Best move (engine int) for the side to move, returned before `deadline`."""
        start = time.monotonic()
        legal = game.legal_moves()
        if self.oracle is not None:
            budget = max(0.0, deadline - start) * EXACT_SHARE
            found = self.oracle.timed(self.oracle.best_moves, game, budget)
            if found is not None:
                score, moves = found
                self.last = f"exact score {score}"
                return moves[0]
        if len(legal) == 1:
            self.last = "only move"
            return legal[0]
        if self.fallback is None:
            self.fallback = AlphaBetaPlayer(self.variant)
        move = self.fallback.choose(game, deadline)
        self.last = "search (not proven)"
        return move
