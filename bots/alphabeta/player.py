"""The alphabeta bot's move choice: exact solving when in reach, iterative deepening otherwise.

Levels (`--level`):
- `easy`: heuristic search to depth 2 with a noisy evaluation, no exact solving.
- `medium`: depth at most 4, a little noise, exact solving only of the last 12 empty cells.
- `hard` (default): the whole time budget, iterative deepening as deep as it goes, exact solving
  (win/draw/loss) of drop-only positions as soon as it finishes in time; in classic 7x6, the
  move of the best exact score wherever the opening book (`arena/solver/book.py`) settles one
  (`Book.best_move`), once `load_book` has run (alphabeta.py calls it in its loader thread).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from search import MATE, Searcher, Solver, Timeout

from arena.bitboard import Geometry, geometry_for
from arena.solver.scope import solvable


@dataclass(frozen=True)
class Level:
    max_depth: int  # heuristic search depth cap
    noise: int  # +- evaluation noise at the root, in evaluation units (a threat is ~24-40)
    solve_empties: int  # try exact solving at most this many empty cells (0: never)
    time_share: float  # share of the move budget used
    book: bool = False  # play the opening book's moves in classic 7x6


LEVELS = {
    "easy": Level(max_depth=2, noise=60, solve_empties=0, time_share=0.3),
    "medium": Level(max_depth=4, noise=8, solve_empties=12, time_share=0.5),
    "hard": Level(max_depth=64, noise=0, solve_empties=30, time_share=1.0, book=True),
}
DEFAULT_LEVEL = "hard"

_book = None  # the classic 7x6 book, once `load_book` has run


def load_book() -> None:
    """Load the classic opening book (numpy and a file read: kept off the first move's clock by
    running in alphabeta.py's loader thread; until then the search plays)."""
    global _book
    from arena.solver.book import load_classic

    _book = load_classic()


class AlphaBetaPlayer:
    """Keeps the search tables of one variant between moves."""

    def __init__(self, variant, level: str = DEFAULT_LEVEL, seed: int | None = None) -> None:
        self.variant = variant
        self.level = LEVELS[level]
        self.geo: Geometry = geometry_for(variant)
        self.searcher = Searcher(self.geo, seed)
        self.searcher.eval_noise = self.level.noise
        # the same search compiled (15-25x the nodes per second), made once loaded (`_fast`)
        self.fast = None
        self.seed = seed
        # Pons' solver knows the standard win condition only
        self.solver = Solver(self.geo) if self.geo.standard and not variant.pops else None
        self.solve_limit = self.level.solve_empties
        self.last_depth = 0
        self.last_score = 0
        self.solved: int | None = None  # exact (weak) value found for the last move, if any
        self.booked = self.level.book and solvable(variant) and (variant.columns, variant.rows) == (7, 6)
        self.book_score: int | None = None  # the exact score of the last move, if from the book

    def new_game(self) -> None:
        """Between games (outside any move's time): make the compiled search's tables if it is
        loaded (30 ms and more) and empty the tables, whose clearing or freeing would otherwise
        cost tens of milliseconds in the middle of a move."""
        self._fast()
        self.solve_limit = self.level.solve_empties
        for searcher in (self.searcher, self.fast):
            if searcher is not None:
                searcher.clear_tables()
        if self.solver is not None:
            self.solver.reset()

    def _history_keys(self, game) -> list[int]:
        """Search keys of every position of the game so far (for the repetition rule)."""
        from arena.game import Game

        replay = Game(self.variant)
        keys = []
        for move in game.moves:
            side = replay.to_move - 1
            keys.append(Searcher.key(replay.boards[side], replay.boards[1 - side], side))
            replay.push(move)
        side = replay.to_move - 1
        keys.append(Searcher.key(replay.boards[side], replay.boards[1 - side], side))
        return keys

    def choose(self, game, deadline: float) -> int:
        """Best move (engine int) for the side to move in `game`, returned before `deadline`."""
        start = time.monotonic()
        self.last_depth = 0  # no search yet for this move (a forced or solved one has none)
        self.book_score = None
        legal = game.legal_moves()
        if len(legal) == 1:
            return legal[0]
        geo = self.geo
        side = game.to_move - 1
        cur, opp, ply = game.boards[side], game.boards[1 - side], game.ply
        mask = cur | opp
        possible = (mask + geo.bottom_all) & geo.full
        wins = geo.win_spots(cur, mask) & possible if geo.standard else 0
        for c in geo.order:
            if wins & geo.column_mask[c]:
                return c + 1
        if self.booked and _book is not None:
            settled = _book.best_move(cur, mask)
            if settled is not None:
                self.book_score, column = settled
                return column + 1
        remaining = max(0.0, deadline - start)
        # keep a little for returning the move: never rely on the last few milliseconds
        budget = max(0.0, remaining - max(0.003, 0.05 * remaining)) * self.level.time_share
        stop = start + budget
        allowed: set[int] | None = None
        self.solved = None
        empties = geo.full.bit_count() - mask.bit_count()
        if (
            self.solver is not None
            and empties <= self.solve_limit
            and ply + empties <= self.variant.max_plies
        ):
            solver = self.solver
            solver.deadline = start + 0.6 * budget
            try:
                value = solver.solve(cur, opp, weak=True)
                columns = solver.move_values(cur, opp, value, weak=True)
            except Timeout:
                # too early: try again a little later in the game
                self.solve_limit = empties - 2
            else:
                self.solved = value
                if value > 0 and columns:
                    return columns[0] + 1
                if value == 0 and columns:
                    allowed = {c + 1 for c in columns}
                    if len(allowed) == 1:
                        return columns[0] + 1
            finally:
                if len(solver.lower) + len(solver.upper) > 2_000_000:
                    solver.reset()
        return self._iterate(game, cur, opp, side, ply, stop, allowed)

    def _fast(self):
        """The compiled searcher once `compiled` is loaded (alphabeta.py loads it in a thread,
        so that numba's import and compile never delay the handshake or a move), else None."""
        if self.fast is None:
            # the module may still be importing in the other thread: only `ready()` says it is
            # whole (set at the end of its warm_up)
            ready = getattr(sys.modules.get("compiled"), "ready", None)
            module = sys.modules["compiled"] if ready is not None and ready() else None
            if module is not None and module.available(self.variant):
                self.fast = module.CompiledSearcher(self.geo, self.seed)
                self.fast.eval_noise = self.level.noise
        return self.fast

    def _iterate(self, game, cur, opp, side, ply, stop, allowed) -> int:
        searcher = self._fast() or self.searcher
        if searcher.table_size() > 1_000_000:
            searcher.clear_tables()
        if self.variant.pops:
            searcher.set_history(self._history_keys(game))
        searcher.decay_history()
        searcher.deadline = stop
        legal = game.legal_moves()
        best = legal[0] if allowed is None else min(allowed, key=legal.index)
        order: list[int] | None = None
        self.last_depth = 0
        empties = self.geo.full.bit_count() - (cur | opp).bit_count()
        start = time.monotonic()
        for depth in range(1, self.level.max_depth + 1):
            try:
                move, score, scores = searcher.root_search(cur, opp, side, ply, depth, order,
                                                           allowed)
            except Timeout:
                # the root moves go best first: once the previous best has been searched at
                # this depth, the best move found so far is at least as good a choice
                move, score, searched = searcher.partial
                if searched and order and self.level.noise == 0 and score > -MATE:
                    best, self.last_score = move, score
                break
            best, self.last_depth, self.last_score = move, depth, score
            order = sorted(scores, key=scores.__getitem__, reverse=True)
            if abs(score) > MATE:
                break
            if not self.variant.pops and depth >= empties:
                break
            # the next depth costs a few times this one: do not start what has no chance to
            # get past its first move
            if time.monotonic() - start > 0.6 * (stop - start):
                break
        return best
