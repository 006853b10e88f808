"""The positions a player that follows the book meets, and a builder that books its every move.

A player that moves by `Engine.best_moves(first=True)` with the book (the `perfect` bot) is a
function of the position: from a root, its own moves are fixed, only the opponent's vary. So
the positions it can meet up to ply N grow by a factor of 7 per two plies, not per ply as every
position does: from the empty board, in either seat, 2,914 positions through ply 8 (against the
184,275 of ply 8 alone) and 44,655 through ply 12 (12.2 million at ply 12). Booking a best move
for each (`build_strategy`) makes it answer every move through ply N from the book, whatever
the opponent plays.

    python -m arena.solver.book --strategy --depth N [--seat both|first|second] [ROOTS] OUT.npz

The walk: at a position where the player is to move it follows the move it would choose with
the book (no search); at one where the opponent is to move it takes every move. Each root is
walked in both seats by default (`--seat first`: only as the side to move there). Adding
entries can change a choice (a newly booked child that keeps the score and is more central is
preferred), which changes the positions below it: the builder walks again after every level it
books, until a walk finds nothing missing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arena.solver.book import Book, _position, book_key, build_best, central_first
from arena.solver.engine import Engine

Lookup = Callable[[int, int], "int | None"]


@dataclass
class Walk:
    """What a walk found: by ply, the positions where the player is to move (move strings), and
    those of them whose move the book does not settle (the shallowest ply with any, only: the
    choices below them are not known yet)."""

    to_move: dict[int, list[str]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    missing_ply: int | None = None

    @property
    def positions(self) -> int:
        return sum(len(level) for level in self.to_move.values())


SEATS = ("both", "first", "second")


def walk(engine: Engine, lookup: Lookup, roots: list[str], depth: int, seat: str = "both") -> Walk:
    """The positions the player meets from `roots` (move strings) before ply `depth`, in either
    seat (see the module doc), or only as the side to move at the root (`seat="first"`: the
    first player from the empty board) or only as the other. `engine` is an
    `arena.solver.engine.Engine` of 7x6; a tiny table will do, as only the book, the rules and
    the root node's own tests settle a choice here."""
    # one entry per exact position (not per mirror pair: the player's choice on a position's
    # mirror image need not be the mirrored choice, as ties go to the lower column)
    player: dict[tuple[int, int], str] = {}
    opponent: dict[tuple[int, int], str] = {}
    for moves in roots:
        position = _position(moves)
        if position is not None:
            if seat != "second":
                player.setdefault(position, moves)
            if seat != "first":
                opponent.setdefault(position, moves)
    result = Walk()
    ply = min((mask.bit_count() for _, mask in [*player, *opponent]), default=depth)
    while ply < depth and (player or opponent):
        here = {p: m for p, m in player.items() if p[1].bit_count() == ply}
        result.to_move[ply] = list(here.values())
        next_player: dict[tuple[int, int], str] = {
            p: m for p, m in player.items() if p[1].bit_count() > ply}
        next_opponent: dict[tuple[int, int], str] = {
            p: m for p, m in opponent.items() if p[1].bit_count() > ply}
        for (cur, mask), moves in here.items():
            found = engine.best_moves(cur, mask, known=lookup, first=True, nodes=1)
            if found is None:  # only a search would settle it (1 node: the root's own tests)
                if result.missing_ply is None:
                    result.missing_ply = ply
                result.missing.append(moves)
                continue
            column = found[1][0]
            child = _child(engine, cur, mask, column, engine.wins_now(cur, mask))
            if child is not None:
                next_opponent.setdefault(child, moves + str(column + 1))
        if result.missing_ply is not None:
            break  # the positions below depend on the choices still missing
        for (cur, mask), moves in opponent.items():
            if mask.bit_count() != ply:
                continue
            possible, wins = engine.possible(mask), engine.wins_now(cur, mask)
            for column in range(engine.columns):
                if possible & engine.column_masks[column]:
                    child = _child(engine, cur, mask, column, wins)
                    if child is not None:
                        next_player.setdefault(child, moves + str(column + 1))
        player, opponent = next_player, next_opponent
        ply += 1
    return result


def _child(engine: Engine, cur: int, mask: int, column: int,
           wins: int) -> tuple[int, int] | None:
    """The position after a drop in `column` (0-based), seen from its side to move; None when
    the drop ends the game (a line: `wins` are the mover's winning cells, or a full board)."""
    move = engine.possible(mask) & engine.column_masks[column]
    if move & wins or (mask | move) == engine.board_mask:
        return None
    return cur ^ mask, mask | move


def build_strategy(roots: list[str], depth: int, out: Path, processes: int,
                   nodes: int | None, seat: str = "both") -> int:
    """Book a best move for every position the player meets from `roots` before ply `depth`
    (see the module doc); resumable like the other builders (it writes after each position)."""
    engine = Engine(7, 6, table_size=1)  # only rules and book: no table needed
    while True:
        book = Book.load(out) if out.is_file() else Book(7, 6)
        found = walk(engine, book.score, roots, depth, seat)
        counts = ", ".join(f"ply {ply}: {len(level)}" for ply, level in found.to_move.items())
        print(f"positions to move in: {counts}", file=sys.stderr, flush=True)
        if not found.missing:
            print(f"every move through ply {depth - 1} is booked ({found.positions} positions)",
                  file=sys.stderr, flush=True)
            return 0
        todo = list({book_key(*_position(m), 7, 6): m for m in found.missing}.values())
        print(f"ply {found.missing_ply}: {len(todo)} positions without a booked move",
              file=sys.stderr, flush=True)
        before = len(book)
        build_best(central_first(todo), out, processes, nodes, every=True)
        # nothing solved within the node budget (a new book is then not even written): the
        # positions below the unsolved ones cannot be walked, so the build stops here
        if (len(Book.load(out)) if out.is_file() else 0) == before:
            print("no progress within the node budget: stopping", file=sys.stderr, flush=True)
            return 1
