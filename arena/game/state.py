"""Game state on bitboards: legal moves, applying and undoing moves, outcomes.

Who wins, what is legal and what draws is asked of the variant's rules (`arena.game.rules`); this
module only keeps the state.

Layout: column c (0-based) owns bits c*(R+1) .. c*(R+1)+R-1, bottom first, plus one always-empty
sentinel bit on top, so that shifting a line across columns never wraps into a neighbour.
"""

from __future__ import annotations

from arena.game.moves import format_move
from arena.game.rules import Outcome, uses_standard_hooks
from arena.game.variant import Variant
from arena.reasons import FULL, LINE, MAX_PLIES, REPETITION

TYPE_CHECKING = False
if TYPE_CHECKING:  # only for annotations: the engine imports nothing it does not run
    import random

__all__ = ["Game", "IllegalMoveError", "Outcome", "geometry"]

_REPETITION = Outcome(None, REPETITION)
_MAX_PLIES = Outcome(None, MAX_PLIES)


class IllegalMoveError(ValueError):
    """A move that is not legal in the current position, or any move after the end."""


class _Geometry:
    """Per-variant constants, computed once and shared by every game of the variant."""

    __slots__ = (
        "variant", "height", "stride", "shifts", "connect", "bottom", "column_mask",
        "full_mask", "fixed_mask", "poppable", "start_boards", "start_heights",
        "after_drop", "after_pop", "repetition_limit", "standard_drops",
    )

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.height = variant.rows
        self.stride = stride = variant.rows + 1
        # vertical, horizontal, and the two diagonals
        self.shifts = (1, stride, stride - 1, stride + 1)
        self.connect = variant.connect
        self.bottom = [1 << (c * stride) for c in range(variant.columns)]
        self.column_mask = [((1 << variant.rows) - 1) << (c * stride) for c in range(variant.columns)]
        self.full_mask = sum(self.column_mask)
        fixed = {c - 1 for c in variant.fixed_columns}
        self.fixed_mask = sum(self.column_mask[c] for c in fixed)
        rules = variant.rules
        self.poppable = list(rules.poppable_columns(variant))
        self.after_drop = rules.after_drop
        self.after_pop = rules.after_pop
        self.repetition_limit = rules.repetition_limit(variant)
        # random playouts of drop-only games inline the standard rules when nothing changes them
        self.standard_drops = (not self.poppable and self.repetition_limit is None
                               and uses_standard_hooks(rules, "after_drop"))
        boards = [0, 0]
        heights = []
        for c, column in enumerate(variant.start):
            for r, player in enumerate(column):
                boards[player - 1] |= 1 << (c * stride + r)
            heights.append(len(column))
        self.start_boards = tuple(boards)
        self.start_heights = tuple(heights)

    def has_line(self, board: int) -> bool:
        k = self.connect
        if k == 4:
            for s in self.shifts:
                m = board & (board >> s)
                if m & (m >> (2 * s)):
                    return True
            return False
        for s in self.shifts:
            # Doubling: after each step m marks the starts of runs of `length` discs.
            m, length = board, 1
            while length * 2 <= k:
                m &= m >> (length * s)
                length *= 2
            if length < k:
                m &= m >> ((k - length) * s)
            if m:
                return True
        return False

    def line_cells(self, board: int) -> int:
        """Bitmask of every disc of `board` that is part of a line of `connect` or more."""
        k = self.connect
        cells = 0
        for s in self.shifts:
            m = board
            for i in range(1, k):
                m &= board >> (i * s)
            for i in range(k):
                cells |= m << (i * s)
        return cells


_GEOMETRIES: dict[Variant, _Geometry] = {}


def geometry(variant: Variant) -> _Geometry:
    geo = _GEOMETRIES.get(variant)
    if geo is None:
        geo = _GEOMETRIES[variant] = _Geometry(variant)
    return geo


class Game:
    """A game in progress: mutable, with push/pop for search and full history for repetition."""

    __slots__ = ("variant", "_geo", "boards", "heights", "to_move", "moves", "outcome",
                 "_undo", "_seen")

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self._geo = geo = geometry(variant)
        self.boards = list(geo.start_boards)  # index 0: player 1, index 1: player 2
        self.heights = list(geo.start_heights)
        self.to_move = 1
        self.moves: list[int] = []
        self.outcome: Outcome | None = None
        self._undo: list[tuple[int, int, Outcome | None]] = []
        # The start position counts as the first occurrence of itself.
        self._seen: dict[int, int] | None = (
            None if geo.repetition_limit is None else {self.key(): 1}
        )

    @classmethod
    def from_rows(cls, variant: Variant, rows: list[str], to_move: int = 1) -> Game:
        """A position from a drawing of the grid (top row first, `.`/`1`/`2`), for tests and tools.

        The position has no history: its move list is empty and repetition counts start here.
        """
        if len(rows) != variant.rows or any(len(row) != variant.columns for row in rows):
            raise ValueError(f"expected {variant.rows} rows of {variant.columns} cells")
        game = cls(variant)
        geo = game._geo
        boards = [0, 0]
        heights = [0] * variant.columns
        for r, row in enumerate(reversed(rows)):
            for c, cell in enumerate(row):
                if cell in "12":
                    if heights[c] != r:
                        raise ValueError(f"disc floating in column {c + 1}, row {r + 1}")
                    boards[int(cell) - 1] |= geo.bottom[c] << r
                    heights[c] = r + 1
                elif cell != ".":
                    raise ValueError(f"bad cell {cell!r}: use '.', '1' or '2'")
        game.boards, game.heights, game.to_move = boards, heights, to_move
        if game._seen is not None:
            game._seen = {game.key(): 1}
        return game

    @property
    def ply(self) -> int:
        return len(self.moves)

    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    def key(self) -> int:
        """A hash key of the position: every disc and the player to move."""
        return ((self.boards[0] << self._geo.full_mask.bit_length() | self.boards[1]) << 1) | (
            self.to_move - 1
        )

    def copy(self) -> Game:
        other = Game.__new__(Game)
        other.variant = self.variant
        other._geo = self._geo
        other.boards = list(self.boards)
        other.heights = list(self.heights)
        other.to_move = self.to_move
        other.moves = list(self.moves)
        other.outcome = self.outcome
        other._undo = list(self._undo)
        other._seen = None if self._seen is None else dict(self._seen)
        return other

    def legal_moves(self) -> list[int]:
        if self.outcome is not None:
            return []
        rows = self._geo.height
        moves = [c + 1 for c, h in enumerate(self.heights) if h < rows]
        if self._geo.poppable:
            mine = self.boards[self.to_move - 1]
            bottom = self._geo.bottom
            moves.extend(-(c + 1) for c in self._geo.poppable if mine & bottom[c])
        return moves

    def is_legal(self, move: int) -> bool:
        if self.outcome is not None or move == 0 or abs(move) > self.variant.columns:
            return False
        c = abs(move) - 1
        if move > 0:
            return self.heights[c] < self._geo.height
        return c in self._geo.poppable and bool(self.boards[self.to_move - 1] & self._geo.bottom[c])

    def push(self, move: int) -> Outcome | None:
        """Play a move; returns the outcome if the game ended with it."""
        if not self.is_legal(move):
            raise IllegalMoveError(f"illegal move {format_move(move)}: {self._why_illegal(move)}")
        return self._apply(move)

    def _why_illegal(self, move: int) -> str:
        column = abs(move)
        if self.outcome is not None:
            return "the game is over"
        if not 1 <= column <= self.variant.columns:
            return f"there is no column {column} (columns 1-{self.variant.columns})"
        if move > 0:
            return f"column {column} is full"
        if not self.variant.pops:
            return "pops are not allowed in this variant"
        if column in self.variant.fixed_columns:
            return f"column {column} is fixed and cannot be popped"
        if column - 1 not in self._geo.poppable:
            return f"column {column} cannot be popped under rule {self.variant.rules.name}"
        if self.heights[column - 1] == 0:
            return f"column {column} is empty"
        return f"the bottom disc of column {column} is not player {self.to_move}'s"

    def _apply(self, move: int) -> Outcome | None:
        geo = self._geo
        boards = self.boards
        me = self.to_move - 1
        self._undo.append((boards[0], boards[1], self.outcome))
        if move > 0:
            c = move - 1
            boards[me] |= geo.bottom[c] << self.heights[c]
            self.heights[c] += 1
            verdict = geo.after_drop(geo, boards[me], boards[1 - me])
        else:
            c = -move - 1
            mask = geo.column_mask[c]
            for i in (0, 1):
                b = boards[i]
                boards[i] = (b & ~mask) | ((b & mask) >> 1 & mask)
            self.heights[c] -= 1
            verdict = geo.after_pop(geo, boards[me], boards[1 - me])
        outcome = None if verdict is None else verdict.outcomes[me]
        self.moves.append(move)
        self.to_move = 2 - me
        if self._seen is not None:
            key = self.key()
            count = self._seen.get(key, 0) + 1
            self._seen[key] = count
            if outcome is None and count >= geo.repetition_limit:
                outcome = _REPETITION
        if outcome is None and len(self.moves) >= self.variant.max_plies:
            outcome = _MAX_PLIES
        self.outcome = outcome
        return outcome

    def pop(self) -> int:
        """Undo the last move and return it."""
        move = self.moves.pop()
        if self._seen is not None:
            key = self.key()
            count = self._seen[key] - 1
            if count:
                self._seen[key] = count
            else:
                del self._seen[key]
        b0, b1, self.outcome = self._undo.pop()
        self.boards[0], self.boards[1] = b0, b1
        self.to_move = 3 - self.to_move
        c = abs(move) - 1
        self.heights[c] += -1 if move > 0 else 1
        return move

    def cell(self, column: int, row: int) -> int:
        """Owner (0, 1 or 2) of a cell, both 1-based, row 1 at the bottom."""
        bit = self._geo.bottom[column - 1] << (row - 1)
        return 1 if self.boards[0] & bit else 2 if self.boards[1] & bit else 0

    def board_rows(self) -> list[str]:
        """The grid as strings, top row first, `.` for empty and `1`/`2` for discs."""
        return [
            "".join(".12"[self.cell(c, r)] for c in range(1, self.variant.columns + 1))
            for r in range(self.variant.rows, 0, -1)
        ]

    def winning_cells(self) -> list[tuple[int, int]]:
        """(column, row) of every disc in a line of the winner, 1-based; empty unless won by a line."""
        if self.outcome is None or self.outcome.winner is None:
            return []
        cells = self._geo.line_cells(self.boards[self.outcome.winner - 1])
        return [
            (c, r)
            for c in range(1, self.variant.columns + 1)
            for r in range(1, self.variant.rows + 1)
            if cells & (self._geo.bottom[c - 1] << (r - 1))
        ]

    def random_playout(self, rng: random.Random) -> Outcome:
        """Play uniformly random legal moves to the end (used by benchmarks and MCTS bots)."""
        if self._geo.standard_drops:
            return self._random_drops(rng)
        while self.outcome is None:
            moves = self.legal_moves()
            self._apply(moves[int(rng.random() * len(moves))])
        return self.outcome

    def _random_drops(self, rng: random.Random) -> Outcome:
        # The hot loop of drop-only variants under the standard `after_drop` (arena.game.rules),
        # inlined with locals bound for speed.
        geo = self._geo
        boards, heights, moves, undo = self.boards, self.heights, self.moves, self._undo
        rows, bottom, full, has_line = geo.height, geo.bottom, geo.full_mask, geo.has_line
        cap = self.variant.max_plies
        open_columns = [c for c, h in enumerate(heights) if h < rows]
        rand = rng.random
        me = self.to_move - 1
        outcome = self.outcome
        while outcome is None:
            i = int(rand() * len(open_columns))
            c = open_columns[i]
            undo.append((boards[0], boards[1], None))
            h = heights[c]
            b = boards[me] | (bottom[c] << h)
            boards[me] = b
            heights[c] = h + 1
            if h + 1 == rows:
                open_columns[i] = open_columns[-1]
                open_columns.pop()
            moves.append(c + 1)
            me = 1 - me
            if has_line(b):
                outcome = Outcome(2 - me, LINE)
            elif (boards[0] | boards[1]) == full:
                outcome = Outcome(None, FULL)
            elif len(moves) >= cap:
                outcome = _MAX_PLIES
        self.to_move = me + 1
        self.outcome = outcome
        return outcome
