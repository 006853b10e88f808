"""The strategy book: every position a player following the book meets has its move booked."""

from __future__ import annotations

import pytest

from arena.solver.book import DATA, Book, _position, _position_lines, load_classic
from arena.solver.book import main as build
from arena.solver.engine import Engine
from arena.solver.strategy import walk
from tests.solver_helpers import pons_rows

pytest.importorskip("numba", reason="the exact solver needs numba, a dependency: pip install -e .")

# From the openings users start perfect from: `arena play`'s built-in ones and the drawn
# two-move ones (`arena openings --variant classic --plies 2 --balanced`), both mirror images.
OPENING_ROOTS = _position_lines(DATA / "classic_strategy_roots.txt")
OPENINGS_STRATEGY_DEPTH = 11
# Through this ply, `perfect` answers every move from the bundled book when it starts from the
# empty board, in either seat, whatever the opponent plays (README, bots/perfect/README.md).
BUNDLED_STRATEGY_DEPTH = 13
# New entries can change perfect's choice where a newly booked child keeps the score and is
# more central, and the positions below a changed choice lack their moves: after any build,
# run both strategy builds again until neither books anything (each solves only what is missing).
REBUILD = ("without a booked move; rerun python -m arena.solver.book --strategy --depth 13 "
           "arena/solver/data/classic_book.npz and the build in classic_strategy_roots.txt, "
           "until neither books anything")


def test_the_strategy_builder_books_every_move_the_player_meets(tmp_path):
    root = next(moves for moves, _ in pons_rows("Test_L2_R1", 40) if len(moves) % 2 == 0)
    depth = len(root) + 5
    (tmp_path / "roots.txt").write_text(f"{root}\n")
    out = tmp_path / "book.npz"
    argv = ["--strategy", "--depth", str(depth), str(tmp_path / "roots.txt"), str(out),
            "--processes", "1"]
    assert build(argv) == 0
    book = Book.load(out)
    player = Engine(7, 6, table_size=1 << 16)
    reference = Engine(7, 6, table_size=1 << 20)
    found = walk(player, book.score, [root], depth)
    assert found.missing == []
    assert sorted(found.to_move) == list(range(len(root), depth))
    # the player in the second seat meets every reply to the root that does not end the game
    replies = {m for m in found.to_move[len(root) + 1] if m[:-1] == root}
    assert len(replies) == sum(
        1 for c in range(1, 8) if _position(root + str(c)) is not None)
    for level in found.to_move.values():
        for moves in level:
            cur, mask = _position(moves)
            value, (column, *_) = player.best_moves(cur, mask, known=book.score, first=True)
            # from the book or the rules; at most the root's own tests (a forced loss), no search
            assert player.nodes <= 1, moves
            assert value == reference.score(cur, mask), moves
            assert column in reference.best_moves(cur, mask)[1], moves  # it keeps the score
    # as the side to move at the root only: its own plies, a part of the walk in both seats
    first = walk(player, book.score, [root], depth, seat="first")
    assert first.missing == []
    assert all(not level for ply, level in first.to_move.items() if (ply - len(root)) % 2)
    _, (chosen, *_) = player.best_moves(*_position(root), known=book.score, first=True)
    after_choice = first.to_move[len(root) + 2]
    assert {m[:-1] for m in after_choice} == {root + str(chosen + 1)}
    assert set(after_choice) <= set(found.to_move[len(root) + 2])
    second = walk(player, book.score, [root], depth, seat="second")
    assert second.missing == []
    assert all(not level for ply, level in second.to_move.items() if (ply - len(root)) % 2 == 0)
    assert set(second.to_move[len(root) + 1]) == replies
    before = out.read_bytes()
    assert build(argv) == 0  # nothing missing: nothing written
    assert out.read_bytes() == before


def test_a_walk_stops_at_the_first_ply_with_a_choice_missing():
    engine = Engine(7, 6, table_size=1)
    found = walk(engine, Book(7, 6).score, [""], 6)
    assert (found.missing_ply, found.missing, found.to_move) == (0, [""], {0: [""]})


def test_perfect_answers_every_move_from_the_book_from_the_empty_board():
    """Whatever the opponent plays, in either seat, through ply BUNDLED_STRATEGY_DEPTH - 1."""
    found = walk(Engine(7, 6, table_size=1), load_classic().score, [""], BUNDLED_STRATEGY_DEPTH)
    assert found.missing == [], f"{len(found.missing)} positions of ply {found.missing_ply}: {REBUILD}"
    assert max(found.to_move) == BUNDLED_STRATEGY_DEPTH - 1
    assert len(found.to_move[BUNDLED_STRATEGY_DEPTH - 1]) > 1000


def test_perfect_answers_every_move_from_the_book_from_the_usual_openings():
    from arena.game import PRESETS
    from arena.openings import builtin_openings

    builtin = {"".join(str(m) for m in moves) for moves in builtin_openings(PRESETS["classic"])}
    assert builtin <= set(OPENING_ROOTS)
    book = load_classic()
    # every drawn two-move position, both mirror images: `arena openings --balanced` writes one
    balanced = [m for m in (f"{a}{b}" for a in range(1, 8) for b in range(1, 8))
                if book.score(*_position(m)) == 0]
    assert len(balanced) == 12 and set(balanced) <= set(OPENING_ROOTS), balanced
    found = walk(Engine(7, 6, table_size=1), book.score, OPENING_ROOTS, OPENINGS_STRATEGY_DEPTH)
    assert found.missing == [], f"{len(found.missing)} positions of ply {found.missing_ply}: {REBUILD}"
    assert max(found.to_move) == OPENINGS_STRATEGY_DEPTH - 1


@pytest.mark.parametrize("argv, roots, message", [
    (["--strategy", "BOOK"], None, "--strategy takes --depth N"),
    (["--strategy", "--depth", "4", "--ply", "3", "BOOK"], None, "--strategy takes --depth N"),
    (["--depth", "4", "BOOK"], None, "--depth and --seat go with --strategy"),
    (["--strategy", "--depth", "0", "BOOK"], None, "--depth 0: the walk stops before that ply"),
    (["--strategy", "--depth", "6", "ROOTS", "BOOK"], "44\n8\n",
     "roots.txt:2: '8' is not a classic position still in play"),
    (["--strategy", "--depth", "9", "ROOTS", "BOOK"], "4444444\n", "roots.txt:1: '4444444' is not"),
    (["--strategy", "--depth", "3", "ROOTS", "BOOK"], "# a comment\n4455\n",
     "roots.txt:2: '4455' is 4 plies in: not before --depth 3"),
    (["--strategy", "--depth", "3", "ROOTS", "BOOK"], "# only a comment\n", "roots.txt: no positions"),
    (["--strategy", "--depth", "3", "MISSING", "BOOK"], None, "missing.txt: cannot read"),
    # the other modes check their positions file and the book as well (tracebacks, or silently
    # nothing, before)
    (["MISSING", "BOOK"], None, "missing.txt: cannot read"),
    (["ROOTS", "BOOK"], "d4 d3\n", "roots.txt:1: 'd4 d3' is not a classic position"),
    (["--best-moves", "ROOTS", "BOOK"], "44\n4499\n", "roots.txt:2: '4499' is not"),
    (["--ply", "-1", "BOOK"], None, "--ply -1: a number of plies"),
    (["--nodes", "-5", "ROOTS", "BOOK"], "4\n", "--nodes -5: a node budget"),
    (["ROOTS", "NOTBOOK"], "4\n", "notbook.npz: not a book file"),
    (["ROOTS", "UNWRITABLE"], "4\n", "cannot write there"),
])
def test_the_book_builder_names_a_bad_argument_position_or_book(tmp_path, capsys, argv, roots, message):
    names = {"BOOK": str(tmp_path / "book.npz"), "ROOTS": str(tmp_path / "roots.txt"),
             "MISSING": str(tmp_path / "missing.txt"), "NOTBOOK": str(tmp_path / "notbook.npz"),
             "UNWRITABLE": str(tmp_path / "a-file" / "book.npz")}
    (tmp_path / "notbook.npz").write_text("not a book")
    (tmp_path / "a-file").write_text("a file where the book's folder would go")
    if roots is not None:
        (tmp_path / "roots.txt").write_text(roots)
    with pytest.raises(SystemExit) as stopped:
        build([names.get(a, a) for a in argv])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "book.npz").exists()


def test_the_strategy_builder_stops_when_nothing_fits_in_the_node_budget(tmp_path):
    out = tmp_path / "book.npz"
    assert build(["--strategy", "--depth", "2", "--nodes", "10", "--processes", "1", str(out)]) == 1
    assert not out.exists()  # nothing solved within 10 nodes: nothing written, no crash
