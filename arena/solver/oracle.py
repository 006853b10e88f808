"""`Oracle`: exact values of `arena.game.Game` positions, from the book or the solver.

It settles a position when its variant is one the exact solver handles (`scope.solvable`:
drop-only, four in a row, standard rules, a board of at most 63 bits, a ply cap that cannot cut
the game short) and the solve fits in the node budget. Scores are Pons' (see
`arena.solver.kernel`) for the side to move; `outcome_of` turns one into a win/draw/loss for seat 1.
"""

from __future__ import annotations

import time

from arena.game import Game, Variant
from arena.solver.book import Book, load_classic
from arena.solver.engine import Engine, warm_up
from arena.solver.scope import solvable


def sign(score: int) -> int:
    return (score > 0) - (score < 0)


# The warm-up's measuring search: from the empty board, aborted at this many nodes (20-30 ms here).
# Short searches run at about 40% of a long one's rate (10-12 M nodes/s here), so the estimate
# starts low, and safe, and rises as real searches are timed.
CALIBRATION_NODES = 100_000
# `timed` searches in slices of at most SLICE_S, and stops with less than MIN_SLICE_S left.
# Each new slice redoes the unfinished part of the last: at 0.25 s, one of 20 random ply-8
# positions lost its proof within perfect's second (95% optimal against 100% at 0.5 s).
SLICE_S = 0.5
MIN_SLICE_S = 0.01


class NodeRate:
    """Nodes per second of the solver on this machine, from the searches timed so far.

    The compiled search cannot read a clock, so a time budget becomes a node budget. The
    estimate follows a slow-down at once and a speed-up slowly (the machine may be shared)."""

    def __init__(self, initial: float = 1_000_000.0) -> None:
        self.rate = initial

    def calibrated(self, nodes: int, seconds: float) -> None:
        """The rate of the warm-up's own search, outside any move (see `Oracle.warm`)."""
        if nodes >= 10_000 and seconds > 0:
            self.rate = nodes / seconds

    def nodes_for(self, seconds: float) -> int:
        return max(1000, int(self.rate * max(0.0, seconds)))

    def observe(self, nodes: int, seconds: float) -> None:
        measured = nodes / seconds if seconds > 0 else 0.0
        if seconds > 0.05 and nodes > 10_000:
            self.rate = measured if measured < self.rate else 0.8 * self.rate + 0.2 * measured
        elif seconds > 0.001 and nodes >= 1000 and measured > self.rate:
            # a short search only counts upwards: its fixed costs (book lookups, the call)
            # make it look slower than the search is, never faster; but a rate once set too
            # low (a loaded machine, a first search that paid for loading the machine code)
            # gives budgets too small to ever pass the line above
            self.rate = 0.8 * self.rate + 0.2 * measured


class Oracle:
    """Book + exact solver for the positions of one variant (see `solvable`)."""

    def __init__(self, variant: Variant, engine: Engine | None = None,
                 book: Book | None = None) -> None:
        if not solvable(variant):
            raise ValueError(f"variant {variant.spec} is not solvable exactly")
        self.variant = variant
        self.engine = engine or Engine(variant.columns, variant.rows)
        if book is None:
            classic = (variant.columns, variant.rows) == (7, 6)
            book = load_classic() if classic else Book(variant.columns, variant.rows)
        self.book = book
        self.rate = NodeRate()
        self._warm = False  # see `warm`

    @staticmethod
    def position(game: Game) -> tuple[int, int]:
        """(cur, mask): the discs of the side to move and all discs."""
        side = game.to_move - 1
        return game.boards[side], game.boards[0] | game.boards[1]

    def known(self, cur: int, mask: int) -> int | None:
        return self.book.score(cur, mask)

    def score(self, game: Game, nodes: int | None = None, weak: bool = False) -> int | None:
        """Score of a position that is not over, for the side to move (None: not settled);
        weak: only its sign (-1, 0, 1), often much cheaper."""
        cur, mask = self.position(game)
        if not self.engine.wins_now(cur, mask):
            booked = self.book.score(cur, mask)
            if booked is not None:
                return sign(booked) if weak else booked
        return self.engine.score(cur, mask, nodes=nodes, weak=weak)

    def weak_score(self, game: Game, nodes: int | None = None) -> int | None:
        """-1, 0 or 1: the theoretical result for the side to move (None: not settled)."""
        return self.score(game, nodes, weak=True)

    def move_scores(self, game: Game, nodes: int | None = None) -> dict[int, int] | None:
        """{move (engine int, a drop): score for the side playing it}, or None if not settled."""
        cur, mask = self.position(game)
        scores = self.engine.move_scores(cur, mask, nodes=nodes, known=self.known)
        if scores is None:
            return None
        return {c + 1: s for c, s in scores.items()}

    def best_moves(self, game: Game, nodes: int | None = None, weak: bool = False,
                   first: bool = False) -> tuple[int, list[int]] | None:
        """(score for the side to move, the moves that keep it, centre first), or None if not
        settled: the perfect moves (fastest win, slowest loss, a draw when that is best); weak:
        the moves that keep the result; first: only one of them, one the book settles if it
        can (see `Engine.best_moves`)."""
        cur, mask = self.position(game)
        found = self.engine.best_moves(cur, mask, nodes=nodes, known=self.known, weak=weak,
                                       first=first)
        if found is None:
            return None
        return found[0], [c + 1 for c in found[1]]

    def warm(self) -> None:
        """Load the kernel's machine code, touch every page of the table, and measure the node
        rate, once; a player calls it between games. Otherwise the first timed search does it,
        outside its budget: loading (or compiling) takes 0.2-10 s and the first touch of a 64 MiB
        table 0.1 s, which inside the clock set the rate far too low, and with it the budgets
        of every later search (a rate only rises slowly). The empty board's first 100,000
        nodes measure the rate instead of the default guess, 1 M nodes/s, which was a tenth of
        the long searches' rate here."""
        if self._warm:
            return
        warm_up()
        self.engine.clear()  # the pages of the table are mapped now, not in a timed search
        start = time.monotonic()
        self.engine.score(0, 0, nodes=CALIBRATION_NODES)
        self.rate.calibrated(self.engine.nodes, time.monotonic() - start)
        self._warm = True

    def timed(self, method, game: Game, seconds: float, **options):
        """`method(game, nodes)` (`score`, `best_moves`, `move_scores`) within about `seconds`."""
        # outside the budget, which is the search's (a position's in `analyze` and `openings`,
        # where loading the machine code on a busy machine took all of it; a player warms up
        # between games)
        self.warm()
        # In slices of at most SLICE_S, the clock read between them: a node budget is only as
        # good as the rate estimate, and a position that searches slower than the ones before
        # overran a whole 1 s budget by 0.4 s (random play at ply 9), which in a game is a
        # forfeit on time. A slice over its budget stores nothing unfinished, so the next one
        # starts where the table says, and the result is the same.
        deadline = time.monotonic() + seconds
        total = 0
        while True:
            self.engine.nodes = 0  # an answer from the book searches nothing
            start = time.monotonic()
            step = min(SLICE_S, deadline - start)
            found = method(game, self.rate.nodes_for(step), **options)
            self.rate.observe(self.engine.nodes, time.monotonic() - start)
            total += self.engine.nodes
            if found is not None or deadline - time.monotonic() < MIN_SLICE_S:
                self.engine.nodes = total
                return found
