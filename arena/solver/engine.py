"""`Engine`: exact solving of drop-only connect-4 positions (the compiled kernel plus its tables).

    engine = Engine(7, 6)
    engine.score(cur, mask)               # exact Pons score for the side to move, or None
    engine.move_scores(cur, mask)         # {0-based column: score of the mover after it}

Every call takes a node budget (`nodes=`); None means "no limit". A search that runs out returns
None and leaves the table as it was before the interrupted search (nothing half-searched is
stored), so a later call with a larger budget gives the exact answer.
"""

from __future__ import annotations

import numpy as np

from arena.solver import kernel
from arena.solver.scope import fits

TABLE_SIZE = 1 << 23  # the large tier of the table: 64 MiB, one int64 entry each (see kernel)
SMALL_TIER = 1 << 16  # 512 KiB: the positions near the leaves, in the core's cache
DEEP_EMPTY_CELLS = 16  # positions with at most this many empty cells go to the small tier
UNLIMITED = np.iinfo(np.int64).max


def table_entries(wanted: int) -> int:
    """The table size used for `wanted` entries: odd, and large enough that an entry's key bits
    (kernel.KEY_MASK) and its slot (key % size) tell every key below 2**63 apart (the Chinese
    remainder theorem: size * 2**53 > 2**63)."""
    smallest = (1 << 63) // (kernel.KEY_MASK + 1) + 1
    return max(wanted, smallest) | 1


def table_tiers(columns: int, rows: int, wanted: int) -> np.ndarray:
    """The kernel's `tiers` for a board: a large tier of about `wanted` entries, the small tier,
    and the first ply of the small tier. The split at 16 empty cells and the 2**16 entries were
    the fastest of those measured on 6- to 10-ply positions of 7x6 (a large tier of 2**22-2**24
    made little difference)."""
    deep_ply = max(0, columns * rows - DEEP_EMPTY_CELLS)
    if columns * (rows + 1) <= kernel.KEY_MASK.bit_length():  # an entry holds the whole key
        large = 1 << max(10, (wanted - 1).bit_length())  # a shift of at most 54 (64: undefined)
        small = min(SMALL_TIER, large)
        return np.array([large, 65 - large.bit_length(), small, 65 - small.bit_length(), deep_ply],
                        dtype=np.int64)
    return np.array([table_entries(wanted), 0, table_entries(SMALL_TIER), 0, deep_ply],
                    dtype=np.int64)


class Engine:
    """Exact solver for one board size (drop-only, four in a row)."""

    def __init__(self, columns: int = 7, rows: int = 6, table_size: int = TABLE_SIZE) -> None:
        if not fits(columns, rows, 4):
            raise ValueError(f"the exact solver needs four in a row on at most 63 bits, "
                             f"not {columns}x{rows}")
        self.columns, self.rows = columns, rows
        self.cells = columns * rows
        stride = rows + 1
        self.bottom = sum(1 << (c * stride) for c in range(columns))
        self.column_masks = [((1 << rows) - 1) << (c * stride) for c in range(columns)]
        self.board_mask = self.bottom * ((1 << rows) - 1)
        centre = (columns - 1) / 2
        self.order_list = sorted(range(columns), key=lambda c: (abs(c - centre), c))
        self.order = np.array(self.order_list, dtype=np.int64)
        self.tiers = table_tiers(columns, rows, table_size)
        self.table = np.zeros(int(self.tiers[kernel.LARGE] + self.tiers[kernel.SMALL]),
                              dtype=np.int64)
        self.scratch = np.zeros((self.cells + 1, 2 * columns), dtype=np.int64)
        self.stats = np.zeros(3, dtype=np.int64)
        self.nodes = 0  # nodes searched by the last call

    def clear(self) -> None:
        self.table[:] = 0

    # -- position helpers -----------------------------------------------------------------------
    def possible(self, mask: int) -> int:
        return (mask + self.bottom) & self.board_mask

    def wins_now(self, cur: int, mask: int) -> int:
        """Cells where the side to move completes a line with its next disc (playable ones)."""
        return kernel.winning_spots(cur, mask, self.rows, self.board_mask) & self.possible(mask)

    def _run(self, cur: int, mask: int, weak: bool, nodes: int | None) -> int | None:
        stats = self.stats
        stats[0], stats[1], stats[2] = 0, UNLIMITED if nodes is None else nodes, 0
        moves = mask.bit_count()
        value = kernel.solve(cur, mask, moves, weak, self.columns, self.rows, self.bottom,
                             self.board_mask, self.order, self.table, self.tiers, self.scratch,
                             stats)
        self.nodes = int(stats[0])
        return None if stats[2] else int(value)

    def _at_most(self, cur: int, mask: int, bound: int, nodes: int | None) -> bool | None:
        """Whether the score of a position (not over, its mover unable to win at once) is at
        most `bound` (a null-window search); None when over the node budget."""
        stats = self.stats
        stats[0], stats[1], stats[2] = 0, UNLIMITED if nodes is None else nodes, 0
        r = kernel.negamax(cur, mask, mask.bit_count(), bound, bound + 1, self.columns,
                           self.rows, self.bottom, self.board_mask, self.order, self.table,
                           self.tiers, self.scratch, stats)
        self.nodes = int(stats[0])
        return None if stats[2] else bool(r <= bound)

    # -- answers --------------------------------------------------------------------------------
    def score(self, cur: int, mask: int, *, weak: bool = False, nodes: int | None = None) -> int | None:
        """Exact score of a position that is not over (None: over the node budget)."""
        return self._run(cur, mask, weak, nodes)

    def best_moves(self, cur: int, mask: int, *, nodes: int | None = None, known=None,
                   weak: bool = False, first: bool = False) -> tuple[int, list[int]] | None:
        """(score of the position, the 0-based columns that keep it, centre first); None when
        the budget ran out. One exact solve, then a null-window test per column: much cheaper
        than `move_scores`. `known(cur, mask)` may give a position's score (a book).

        weak: the score is only its sign (-1, 0, 1) and the columns those that keep it (every
        column of a lost position): no blunder, but not the fastest win. Often much cheaper.
        first: only one column that keeps it: the centre-most one settled by `known` or the
        rules if there is one, else the centre-most (the tests stop there). What a player
        needs, for a fraction of the tests."""
        moves = mask.bit_count()
        possible = self.possible(mask)
        wins = self.wins_now(cur, mask)
        if wins:
            self.nodes = 0
            return 1 if weak else (self.cells - moves + 1) // 2, [
                c for c in self.order_list if wins & self.column_masks[c]]
        used = 0
        value = known(cur, mask) if known is not None else None
        if value is None and known is not None:
            value = self.value_from_children(cur, mask, known)
        if value is None:
            value = self._run(cur, mask, weak, nodes)
            used += self.nodes
            if value is None:
                return None
        columns = [c for c in self.order_list if possible & self.column_masks[c]]
        if weak:
            value = (value > 0) - (value < 0)
            if value < 0:  # every move loses: which loses slowest is not asked
                self.nodes = used
                return value, columns[:1] if first else columns
        best = []
        lookup = known or (lambda _cur, _mask: None)
        settled = {c: self._settled_keeps(cur, mask, c, value, lookup, weak) for c in columns}
        if first:
            # a move the book or the rules settle needs no search: the book's builder stores
            # one best child of each position it can (`arena.solver.book --best-moves`)
            for c in columns:
                if settled[c]:
                    self.nodes = used
                    return value, [c]
        for c in columns:
            keeps = settled[c]
            if keeps is None:
                keeps = self._at_most(cur ^ mask, mask | (possible & self.column_masks[c]),
                                      -value, None if nodes is None else max(1, nodes - used))
                used += self.nodes
                if keeps is None:
                    self.nodes = used
                    return None
            if keeps:
                best.append(c)
                if first:
                    break
        self.nodes = used
        return value, best

    def _settled_keeps(self, cur: int, mask: int, column: int, value: int, lookup,
                       weak: bool) -> bool | None:
        """Whether the move in `column` keeps the position's `value`, when the rules or the
        book settle it without a search (else None)."""
        child = self._child_score(cur, mask, column, lookup)
        if child is None:
            return None
        if weak:
            child = (child > 0) - (child < 0)
        return -child >= value

    def _child_score(self, cur: int, mask: int, column: int, lookup) -> int | None:
        """The score of the position after a drop in `column`, for its mover, when the rules or
        `lookup` settle it (else None): a full board is a draw, and a win on the opponent's
        next disc is settled by the rules (the book holds no position with a win on the move)."""
        child_cur, child_mask = cur ^ mask, mask | (self.possible(mask) & self.column_masks[column])
        if child_mask == self.board_mask:
            return 0
        if self.wins_now(child_cur, child_mask):
            return (self.cells - mask.bit_count()) // 2
        return lookup(child_cur, child_mask)

    def value_from_children(self, cur: int, mask: int, known) -> int | None:
        """The score of a position (its mover unable to win at once) whose every child is
        `known` or settled by the rules (`_child_score`)."""
        best = None
        possible = self.possible(mask)
        for c in self.order_list:
            if not possible & self.column_masks[c]:
                continue
            child = self._child_score(cur, mask, c, known)
            if child is None:
                return None
            best = -child if best is None else max(best, -child)
        return best

    def move_scores(self, cur: int, mask: int, *, nodes: int | None = None,
                    known=None) -> dict[int, int] | None:
        """Score of every legal move (0-based column) for the side that plays it; None when the
        budget ran out. `known(cur, mask)` may give a child's score for its own mover (a book)."""
        result: dict[int, int] = {}
        remaining = nodes
        used = 0
        possible = self.possible(mask)
        wins = self.wins_now(cur, mask)
        for c in self.order_list:
            m = possible & self.column_masks[c]
            if not m:
                continue
            child_mask = mask | m
            if m & wins:
                result[c] = (self.cells - mask.bit_count() + 1) // 2
                continue
            if child_mask == self.board_mask:
                result[c] = 0
                continue
            child_cur = cur ^ mask
            child = known(child_cur, child_mask) if known is not None else None
            if child is None:
                child = self._run(child_cur, child_mask, False, remaining)
                used += self.nodes
                if child is None:
                    self.nodes = used
                    return None
                if remaining is not None:
                    remaining = max(1, remaining - self.nodes)
            result[c] = -child
        self.nodes = used
        return result


def warm_up() -> None:
    """Load (or compile, the first time) the machine code of every entry point of the kernel:
    a few nodes of each, from one opponent disc in column 1 of a small table."""
    engine = Engine(7, 6, table_size=1031)
    engine.wins_now(0, 1)
    engine.score(0, 1, nodes=10)
    engine.best_moves(0, 1, nodes=10)
