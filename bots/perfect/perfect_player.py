"""The perfect bot's move choice: book, then solving under a node budget, then search.

In a variant the exact solver handles (`arena.solver.scope.solvable`, classic 7x6 among them) it
plays the move of the best exact score: the fastest win, else a draw, else the slowest loss (among
equals, one the book settles, else the centre-most column). It first proves the result
(win/draw/loss, much cheaper): in a drawn position that is enough, as every move that keeps the
draw is perfect play. A won or lost position then needs its exact score. When only the result
fits in the time, a won position gets a winning move (perhaps not the fastest) and a lost one the
alphabeta bot's move (every move loses: its search resists); when not even the result fits
(early positions outside the book), and in every other variant, the move of the alphabeta bot's
search (bots/alphabeta, level hard) in the time left. The `info` line says which.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "alphabeta"))

from player import AlphaBetaPlayer  # bots/alphabeta

from arena.solver import kernel
from arena.solver.oracle import Oracle
from arena.solver.scope import solvable

# Shares of the move's budget. The win/draw/loss result comes first, in up to RESULT_SHARE of the
# move: two null-window searches, often far cheaper than the exact score. In a drawn position any
# move that keeps the draw is perfect play, so that ends the move. A won or lost position needs
# its exact score too (the fastest win, the slowest loss): that search reuses the table and may
# run until EXACT_SHARE of the move has gone. The rest is kept for the fallback search.
# Measured at 1 s a move, each move judged by the solver (up to a minute a position): on 288 positions of plies 6-12
# (from real games and from random play) 281 moves were optimal with the result first and 269
# with the exact score first; on 120 more (plies 6-8) 113 with RESULT_SHARE 0.8 and 109 with 0.5
# (where the result does not fit, a longer search rarely saves the move).
RESULT_SHARE = 0.8
EXACT_SHARE = 0.9


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
        """Between games: the fallback and its tables made (or emptied) now, not in a move's
        time (a new board size's first move overran 50 ms by 70 ms making them)."""
        if self.fallback is None:
            self.fallback = AlphaBetaPlayer(self.variant)
        self.fallback.new_game()
        if self.oracle is not None:
            self.oracle.warm()  # the solver's rate measured and its table mapped, once

    def choose(self, game, deadline: float) -> int:
        """Best move (engine int) for the side to move, returned before `deadline`."""
        start = time.monotonic()
        budget = deadline - start
        legal = game.legal_moves()
        result: int | None = None  # the proven win/draw/loss (1, 0, -1), if any
        if self.oracle is not None:
            oracle = self.oracle
            found = oracle.timed(oracle.best_moves, game, budget * RESULT_SHARE, weak=True,
                                 first=True)
            if found is not None:
                result, keeping = found
                if result == 0:  # a draw: its exact score, and every move that keeps it is best
                    self.last = "exact score 0"
                    return keeping[0]
                left = deadline - time.monotonic() - budget * (1 - EXACT_SHARE)
                exact = oracle.timed(oracle.best_moves, game, left, first=True) \
                    if left > 0 else None
                if exact is not None:
                    score, moves = exact
                    self.last = f"exact score {score}"
                    return moves[0]
                if result > 0:  # a winning move, perhaps not the fastest
                    self.last = "exact result +1"
                    return keeping[0]
        if len(legal) == 1:
            self.last = "only move"
            return legal[0]
        if self.fallback is None:
            self.fallback = AlphaBetaPlayer(self.variant)
        move = self.fallback.choose(game, deadline)
        # a lost position: every move keeps the result, the search picks the hardest to beat
        self.last = "search (not proven)" if result is None else \
            "search within the proven result -1"
        return move
