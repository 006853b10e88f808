"""Opening book: exact scores of solved positions, stored as a compact .npz data file.

A position is keyed by Pons' key `cur + mask` (unique for a position of drop-only play) of the
lesser of the position and its mirror image, so one entry serves both. The score is for the side
to move (Pons' scale, see `arena.solver.kernel`). The file holds two sorted arrays, `keys`
(int64) and `scores` (int8), plus the board size; lookups are binary searches.

    python -m arena.solver.book POSITIONS_FILE OUT.npz [--nodes N]
    python -m arena.solver.book --ply N OUT.npz [--processes 2]
    python -m arena.solver.book --best-moves (--ply N | POSITIONS_FILE) OUT.npz
    python -m arena.solver.book --strategy --depth N [--seat first] [POSITIONS_FILE] OUT.npz

The first solves each position of a file (one move string of 1-based column digits per line,
e.g. `4453`, `-` for the empty board) and every position one move after it; the second every
position N plies in (up to mirror images and transpositions) that the book lacks, on several
processes. The third books, for each position, its score and one best child (a move of the
best score: one the book or the rules already settle, else the centre-most found by null-window
tests): enough for a player to move exactly with no search, at a fraction of the cost of every
child. The fourth books a best move for every position a player following the book meets
from the empty board (or each position of the file) before ply N (`arena.solver.strategy`).
All write what they solve within the node
budget, the file rewritten after each, so an interrupted run keeps its work (and a rerun
resumes).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
CLASSIC_BOOK = DATA / "classic_book.npz"


def mirror(board: int, columns: int, rows: int) -> int:
    """`board` with its columns in reverse order."""
    stride = rows + 1
    column = (1 << stride) - 1
    out = 0
    for c in range(columns):
        out |= ((board >> (c * stride)) & column) << ((columns - 1 - c) * stride)
    return out


def book_key(cur: int, mask: int, columns: int, rows: int) -> int:
    """Key of a position and its mirror image."""
    return min(cur + mask, mirror(cur, columns, rows) + mirror(mask, columns, rows))


class Book:
    """Exact scores of positions of one board size, looked up by `score(cur, mask)`."""

    def __init__(self, columns: int, rows: int, keys: np.ndarray | None = None,
                 scores: np.ndarray | None = None) -> None:
        self.columns, self.rows = columns, rows
        self.keys = np.zeros(0, dtype=np.int64) if keys is None else keys
        self.scores = np.zeros(0, dtype=np.int8) if scores is None else scores
        self._geo = None  # arena.bitboard.Geometry, made at the first `move_scores`

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def score(self, cur: int, mask: int) -> int | None:
        if not len(self):
            return None
        key = book_key(cur, mask, self.columns, self.rows)
        i = int(np.searchsorted(self.keys, key))
        if i < len(self) and int(self.keys[i]) == key:
            return int(self.scores[i])
        return None

    def move_scores(self, cur: int, mask: int, *, partial: bool = False) -> dict[int, int] | None:
        """{0-based column: the mover's score after it} when the book settles every move of a
        position (four in a row), else None (partial: the moves it settles). Pure Python, no
        solver: a bot can afford it within a move's first milliseconds. A move that wins at
        once, fills the board or lets the opponent win at once is settled by the rules (the book
        holds no position with a win on the move); every other move needs its position in the
        book."""
        geo = self._geometry()
        cells = self.columns * self.rows
        moves = mask.bit_count()
        possible = (mask + geo.bottom_all) & geo.full
        opponent = cur ^ mask
        scores: dict[int, int] = {}
        for column in range(self.columns):
            move = possible & geo.column_mask[column]
            if not move:
                continue
            after = mask | move
            if geo.has_line(cur | move):
                scores[column] = (cells - moves + 1) // 2
            elif after == geo.full:
                scores[column] = 0
            elif geo.win_spots(opponent, after) & (after + geo.bottom_all) & geo.full:
                scores[column] = -((cells - moves) // 2)  # the opponent's win with its next disc
            else:
                child = self.score(opponent, after)
                if child is not None:
                    scores[column] = -child
                elif not partial:
                    return None
        return scores

    def best_move(self, cur: int, mask: int) -> tuple[int, int] | None:
        """(the position's score, a 0-based column that keeps it, centre first) when the book
        settles one: the position's score booked (or every move settled) and a move settled with
        that score. Pure Python, like `move_scores`: the builder's `--best-moves` books one such
        move for each position it covers."""
        geo = self._geometry()
        scores = self.move_scores(cur, mask, partial=True)
        value = self.score(cur, mask)
        if value is None:
            if not scores or len(scores) < ((mask + geo.bottom_all) & geo.full).bit_count():
                return None
            value = max(scores.values())
        for column in geo.order:
            if scores.get(column) == value:
                return value, column
        return None

    def _geometry(self):
        """The board's line tests (arena.bitboard's, shared with the bots), made once."""
        if self._geo is None:
            from arena.bitboard import geometry_for
            from arena.game import parse_variant

            self._geo = geometry_for(parse_variant(f"classic:{self.columns}x{self.rows}"))
        return self._geo

    @classmethod
    def from_entries(cls, columns: int, rows: int, entries: dict[int, int]) -> Book:
        keys = np.array(sorted(entries), dtype=np.int64)
        scores = np.array([entries[k] for k in sorted(entries)], dtype=np.int8)
        return cls(columns, rows, keys, scores)

    def entries(self) -> dict[int, int]:
        return {int(k): int(s) for k, s in zip(self.keys, self.scores, strict=True)}

    def save(self, path: Path) -> None:
        """Write the book; atomically, so that a builder stopped mid-write keeps the last book."""
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial.npz")
        np.savez_compressed(partial, keys=self.keys, scores=self.scores,
                            size=np.array([self.columns, self.rows], dtype=np.int64))
        os.replace(partial, path)

    @classmethod
    def load(cls, path: Path) -> Book:
        with np.load(path) as data:
            columns, rows = (int(x) for x in data["size"])
            return cls(columns, rows, data["keys"].astype(np.int64), data["scores"].astype(np.int8))


def load_classic() -> Book:
    """The bundled classic 7x6 book (empty if the data file is missing)."""
    if CLASSIC_BOOK.is_file():
        return Book.load(CLASSIC_BOOK)
    return Book(7, 6)


def _position(moves: str) -> tuple[int, int] | None:
    """(cur, mask) after a string of 1-based column digits in classic, None if the moves are
    illegal or the game is over."""
    from arena.game import PRESETS, Game, IllegalMoveError

    game = Game(PRESETS["classic"])
    try:
        for digit in moves:
            game.push(int(digit))
    except (IllegalMoveError, ValueError):
        return None
    if game.outcome is not None:
        return None
    side = game.to_move - 1
    return game.boards[side], game.boards[0] | game.boards[1]


def positions_at_ply(ply: int) -> dict[int, str]:
    """Every classic position `ply` plies in that is not over, by book key (a position and its
    mirror image share one), each with one move string that reaches it."""
    level = {book_key(0, 0, 7, 6): ""}
    for _ in range(ply):
        deeper: dict[int, str] = {}
        for moves in level.values():
            for column in range(1, 8):
                position = _position(moves + str(column))
                if position is not None:
                    deeper.setdefault(book_key(*position, 7, 6), moves + str(column))
        level = deeper
    return level


_worker_engine = None


def _engine():
    """This worker process's engine, made at its first position and kept: a stored bound holds
    for its position whatever the search's root, so the table helps the next positions."""
    global _worker_engine
    from arena.solver.engine import Engine

    if _worker_engine is None:
        _worker_engine = Engine(7, 6)
    return _worker_engine


def _solve(moves: str, nodes: int | None) -> tuple[str, int | None]:
    """One position's score in a worker process."""
    return moves, _engine().score(*_position(moves), nodes=nodes)


_worker_entries: dict[int, int] = {}  # the book as it was when the pool started (forked)


def _solve_best(moves: str, nodes: int | None) -> tuple[str, int | None, str | None]:
    """A position's score and the move string of a best child, in a worker process: the
    position's score from the book (or a solve), then a child the book settles as keeping it,
    else null-window tests of the children, centre first (`Engine.best_moves(first=True)`)."""

    def known(cur: int, mask: int) -> int | None:
        return _worker_entries.get(book_key(cur, mask, 7, 6))

    found = _engine().best_moves(*_position(moves), known=known, first=True, nodes=nodes)
    if found is None or not found[1]:  # over the budget (none kept: a wrong booked score)
        return moves, None, None
    value, (column, *_) = found
    return moves, value, moves + str(column + 1)


def build_best(lines: list[str], out: Path, processes: int, nodes: int | None, *,
               every: bool = False) -> int:
    """Book one best child of each position of `lines` (and the position's score), so that a
    player finds its exact move there without a search (see the module doc). Positions where
    `Book.best_move` already finds one are skipped, unless `every` (the strategy builder's
    positions, which the engine's own choice found unsettled)."""
    from functools import partial
    from multiprocessing import get_context

    from arena.solver.engine import Engine

    global _worker_entries
    book = Book.load(out) if out.is_file() else Book(7, 6)
    entries = book.entries()
    wins_now = Engine(7, 6, table_size=1).wins_now
    todo = [moves for moves in lines if (position := _position(moves)) is not None
            and not wins_now(*position) and (every or book.best_move(*position) is None)]
    print(f"{len(todo)} positions without a booked best move", file=sys.stderr, flush=True)
    _worker_entries = entries
    with get_context("fork").Pool(processes) as pool, _Saver(out, entries) as saver:
        for moves, value, child in pool.imap_unordered(partial(_solve_best, nodes=nodes), todo):
            print(f"{moves}: {value} {child and child[-1]}", file=sys.stderr, flush=True)
            if value is None:
                continue
            entries[book_key(*_position(moves), 7, 6)] = value
            after = _position(child)
            # a child that is over or lets the opponent win at once is settled by the rules
            # (and the book holds no position with a win on the move)
            if after is not None and not wins_now(*after):
                entries[book_key(*after, 7, 6)] = -value
            saver.changed()
    return 0


class _Saver:
    """Saves a builder's book at most every `every` seconds and once more at the end, however
    the build ends (Ctrl-C included): saving the whole book after each position took the
    builder's main process a third of a core once the book held 70,000 entries."""

    def __init__(self, out: Path, entries: dict[int, int], every: float = 10.0) -> None:
        self.out, self.entries, self.every = out, entries, every
        self.dirty = False
        self.saved_at = time.monotonic()

    def __enter__(self) -> _Saver:
        return self

    def changed(self) -> None:
        self.dirty = True
        if time.monotonic() - self.saved_at >= self.every:
            self.save()

    def save(self) -> None:
        if self.dirty:
            Book.from_entries(7, 6, self.entries).save(self.out)
            self.dirty = False
        self.saved_at = time.monotonic()

    def __exit__(self, *exc_info: object) -> None:
        self.save()


def central_first(lines) -> list[str]:
    """Move strings, central lines first: real games take them most, so an interrupted build
    has the most useful positions."""
    return sorted(lines, key=lambda moves: (sum(abs(int(d) - 4) for d in moves), moves))


def build_ply(ply: int, out: Path, processes: int, nodes: int | None) -> int:
    """Solve every position `ply` plies in that the book at `out` lacks (see the module doc)."""
    from functools import partial
    from multiprocessing import get_context

    from arena.solver.engine import Engine

    entries = Book.load(out).entries() if out.is_file() else {}
    wins_now = Engine(7, 6, table_size=1).wins_now  # a tiny table: only for the immediate wins
    # each line is the position's first move string found, centre first
    todo = central_first(moves for key, moves in positions_at_ply(ply).items()
                         if key not in entries and not wins_now(*_position(moves)))
    print(f"ply {ply}: {len(todo)} positions to solve", file=sys.stderr, flush=True)
    with get_context("fork").Pool(processes) as pool, _Saver(out, entries) as saver:
        for moves, score in pool.imap_unordered(partial(_solve, nodes=nodes), todo):
            print(f"{moves}: {score}", file=sys.stderr, flush=True)
            if score is not None:
                entries[book_key(*_position(moves), 7, 6)] = score
                saver.changed()
    return 0


def _numbered_position_lines(positions: Path) -> list[tuple[int, str]]:
    """(line number, move string) of each position of a positions file (`-` is the empty
    board, `#` starts a comment)."""
    lines = []
    for number, line in enumerate(positions.read_text().split("\n"), 1):
        moves = line.split("#")[0].strip()
        if moves:
            lines.append((number, "" if moves == "-" else moves))
    return lines


def _position_lines(positions: Path) -> list[str]:
    """The move strings of a positions file (see `_numbered_position_lines`)."""
    return [moves for _, moves in _numbered_position_lines(positions)]


def _checked_positions(parser: argparse.ArgumentParser, path: Path) -> list[tuple[int, str]]:
    """(line number, moves) of a positions file, each checked (a wrong one is an error naming
    its line: an `arena openings` file, say, writes `d4 d3`, not `43`)."""
    try:
        numbered = _numbered_position_lines(path)
    except (OSError, UnicodeDecodeError) as exc:
        parser.error(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    for number, moves in numbered:
        if _position(moves) is None:
            parser.error(f"{path}:{number}: {moves!r} is not a classic position still in play "
                         f"(1-based column digits, '-' for the empty board)")
    if not numbered:
        parser.error(f"{path}: no positions")
    return numbered


def _roots(parser: argparse.ArgumentParser, path: Path, depth: int) -> list[str]:
    """The positions of a roots file, each checked (a wrong one is an error naming its line)."""
    roots = []
    for number, moves in _checked_positions(parser, path):
        if len(moves) >= depth:
            parser.error(f"{path}:{number}: {moves!r} is {len(moves)} plies in: not before "
                         f"--depth {depth}")
        roots.append(moves)
    return roots


def _check_out(parser: argparse.ArgumentParser, out: Path) -> None:
    """The book to extend must be one, and its folder writable (each solved position is saved
    at once: better to know before hours of solving)."""
    import tempfile
    import zipfile

    if out.exists():
        try:
            Book.load(out)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            parser.error(f"{out}: not a book file (a .npz this builder wrote): {type(exc).__name__}")
    folder = out.parent.resolve()
    while not folder.exists():  # the save makes the missing folders: check the first one there
        folder = folder.parent
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".book-check-"):
            pass
    except OSError as exc:
        parser.error(f"{out}: cannot write there: {exc.strerror or exc}")


def main(argv: list[str] | None = None) -> int:
    from arena.solver.engine import Engine
    from arena.solver.strategy import SEATS, build_strategy

    parser = argparse.ArgumentParser(description="Add solved positions to a classic book.")
    parser.add_argument("files", type=Path, nargs="+", metavar="[POSITIONS] OUT",
                        help="a positions file and the book, or only the book with --ply")
    parser.add_argument("--ply", type=int, default=None, help="solve every position N plies in")
    parser.add_argument("--processes", type=int, default=2,
                        help="with --ply, --best-moves or --strategy (default 2)")
    parser.add_argument("--nodes", type=int, default=None, help="node budget per position")
    parser.add_argument("--best-moves", action="store_true",
                        help="book one best child of each position instead of every child")
    parser.add_argument("--strategy", action="store_true",
                        help="book a best move for every position a player that follows the "
                             "book meets before ply --depth, from the empty board or from each "
                             "position of POSITIONS (arena.solver.strategy)")
    parser.add_argument("--depth", type=int, default=None, help="with --strategy")
    parser.add_argument("--seat", choices=SEATS, default=None,
                        help="with --strategy: the player as the side to move at each root "
                             "(first), as the other (second) or both (default)")
    args = parser.parse_args(argv)
    processes = max(1, args.processes)
    if args.ply is not None and args.ply < 0:
        parser.error(f"--ply {args.ply}: a number of plies, 0 or more")
    if args.nodes is not None and args.nodes < 1:
        parser.error(f"--nodes {args.nodes}: a node budget, 1 or more")
    if not args.strategy and (args.depth is not None or args.seat is not None):
        parser.error("--depth and --seat go with --strategy")
    if args.strategy:
        if args.depth is None or args.ply is not None or args.best_moves:
            parser.error("--strategy takes --depth N, not --ply or --best-moves")
        if len(args.files) > 2:
            parser.error("give [POSITIONS] OUT with --strategy")
        if args.depth < 1:
            parser.error(f"--depth {args.depth}: the walk stops before that ply, so it is at least 1")
        roots = _roots(parser, args.files[0], args.depth) if len(args.files) == 2 else [""]
        _check_out(parser, args.files[-1])
        return build_strategy(roots, args.depth, args.files[-1], processes, args.nodes,
                              args.seat or "both")
    if len(args.files) != (1 if args.ply is not None else 2):
        parser.error("give POSITIONS OUT, or --ply N OUT")
    _check_out(parser, args.files[-1])
    if args.best_moves:
        if args.ply is not None:
            lines = central_first(positions_at_ply(args.ply).values())
        else:
            lines = [moves for _, moves in _checked_positions(parser, args.files[0])]
        return build_best(lines, args.files[-1], processes, args.nodes)
    if args.ply is not None:
        return build_ply(args.ply, args.files[0], processes, args.nodes)
    positions, out = args.files
    engine = Engine(7, 6)
    book = Book.load(out) if out.is_file() else Book(7, 6)
    entries = book.entries()

    def known(cur: int, mask: int) -> int | None:
        return entries.get(book_key(cur, mask, 7, 6))

    with _Saver(out, entries) as saver:
        for _, moves in _checked_positions(parser, positions):
            # the children first: a position whose children are all known needs no search
            for extra in [str(c) for c in range(1, 8)] + [""]:
                position = _position(moves + extra)
                if position is None:
                    continue
                cur, mask = position
                key = book_key(cur, mask, 7, 6)
                if key in entries or engine.wins_now(cur, mask):
                    continue
                score = engine.value_from_children(cur, mask, known) if not extra else None
                if score is None:
                    score = engine.score(cur, mask, nodes=args.nodes)
                print(f"{moves + extra or '-'}: {score} ({engine.nodes} nodes)", file=sys.stderr,
                      flush=True)
                if score is not None:
                    entries[key] = score
                    saver.changed()
    return 0


if __name__ == "__main__":
    sys.exit(main())
