"""The perfect bot's move choice: book, then solving under a node budget, then search.

In a variant the exact solver handles (`arena.solver.scope.solvable`, classic 7x6 among them) it
plays the move of the best exact score: the fastest win, else a draw, else the slowest loss (among
equals, one the book settles, else the centre-most column). It first proves the result
(win/draw/loss, cheaper), then the exact score. When only the result fits in the time, it plays
the alphabeta bot's move if that keeps the result, else the centre-most move that does; when
neither fits (early positions outside the book), and in every other variant, the move of the
alphabeta bot's search (bots/alphabeta, level hard) in the time left. The `info` line says which.
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

# Shares of the move's budget: the exact solve may use the first half; if it runs out, the
# win/draw/loss solve (which reuses the table the first search filled) what is left of 85%; the
# rest is kept for the fallback search. Before ply 8, where outside the book a proof rarely fits
# in a second, 20% and 35%. A proof, even of the result alone, is worth more than a longer search.
EXACT_SHARE = 0.5
EARLY_EXACT_SHARE = 0.2
EARLY_PLIES = 8
PROOF_SHARE = 0.85
EARLY_PROOF_SHARE = 0.35


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

    def choose(self, game, deadline: float) -> int:
        """Best move (engine int) for the side to move, returned before `deadline`."""
        start = time.monotonic()
        legal = game.legal_moves()
        keeping: list[int] | None = None  # the moves that keep the result, if proven
        if self.oracle is not None:
            oracle = self.oracle
            budget = deadline - start
            early = game.ply < EARLY_PLIES
            exact = oracle.timed(oracle.best_moves, game,
                                 budget * (EARLY_EXACT_SHARE if early else EXACT_SHARE),
                                 first=True)
            if exact is not None:
                score, moves = exact
                self.last = f"exact score {score}"
                return moves[0]
            proof = EARLY_PROOF_SHARE if early else PROOF_SHARE
            remaining = deadline - time.monotonic() - budget * (1 - proof)
            found = oracle.timed(oracle.best_moves, game, remaining, weak=True) \
                if remaining > 0 else None
            if found is not None:
                result, keeping = found
                if len(keeping) == 1:
                    self.last = f"exact result {result:+d}"
                    return keeping[0]
        if len(legal) == 1:
            self.last = "only move"
            return legal[0]
        if self.fallback is None:
            self.fallback = AlphaBetaPlayer(self.variant)
        move = self.fallback.choose(game, deadline)
        if keeping is None:
            self.last = "search (not proven)"
            return move
        self.last = f"search within the proven result {result:+d}"
        # a search move that would throw the result away gives way to the centre-most keeping one
        return move if move in keeping else keeping[0]
