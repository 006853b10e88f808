"""The compiled exact solver against Pons' reference values, Tromp's board-size results, and the
pure-Python solver of bots/alphabeta; its node budget; the book file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena.game import PRESETS, Game, parse_variant
from arena.solver import kernel
from arena.solver.book import Book, book_key, mirror
from arena.solver.engine import Engine, table_entries
from arena.solver.oracle import Oracle
from arena.solver.scope import fits, solvable

pytest.importorskip("numba", reason="the exact solver needs numba, a dependency: pip install -e .")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bots" / "alphabeta"))

from search import Solver  # noqa: E402  (the pure-Python solver, an independent check)

from arena.bitboard import geometry_for  # noqa: E402
from tests.conftest import reference_path  # noqa: E402
from tests.solver_helpers import pons_rows  # noqa: E402


def classic_position(moves: str) -> Game:
    game = Game(PRESETS["classic"])
    for digit in moves:
        game.push(int(digit))
    return game


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(7, 6)


@pytest.mark.parametrize("name, count", [("Test_L3_R1", 40), ("Test_L2_R1", 40), ("Test_L1_R1", 25)])
def test_scores_equal_pons_reference(engine, name, count):
    for moves, expected in pons_rows(name, count):
        cur, mask = Oracle.position(classic_position(moves))
        assert engine.score(cur, mask) == expected, moves


def test_tiny_hashed_tiers_on_7x6_still_give_exact_scores():
    """7x6 keys fit an entry whole, so both tiers are powers of two with hashed slots; at 1,024
    entries each, slots collide all the time, and both tiers are used (the split at 16 empty
    cells falls inside these searches)."""
    engine = Engine(7, 6, table_size=1)
    assert list(engine.tiers) == [1024, 54, 1024, 54, 26]
    assert list(Engine(7, 6).tiers) == [1 << 23, 41, 1 << 16, 48, 26]
    for moves, expected in pons_rows("Test_L2_R1", 15) + pons_rows("Test_L1_R1", 5):
        cur, mask = Oracle.position(classic_position(moves))
        engine.clear()
        assert engine.score(cur, mask) == expected, moves
    assert engine.table[:1024].any() and engine.table[1024:].any()


@pytest.mark.parametrize("columns, rows", [(4, 4), (5, 4), (6, 4), (4, 5), (5, 5), (4, 6)])
def test_empty_boards_have_trompss_values(columns, rows):
    expected = {}
    # skips (fails under CI=true) without the data; it raised FileNotFoundError in a clone
    for line in reference_path("connect4", "c4_board_size_outcomes.tsv").read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0].isdigit():
            expected[int(parts[0]), int(parts[1])] = {"+": 1, "=": 0, "-": -1}[parts[2]]
    if not expected:
        pytest.skip("shared reference data not found")
    score = Engine(columns, rows, table_size=1 << 20).score(0, 0)
    assert (score > 0) - (score < 0) == expected[columns, rows]


def test_weak_scores_have_the_sign_of_the_exact_ones(engine):
    for moves, expected in pons_rows("Test_L2_R1", 20):
        cur, mask = Oracle.position(classic_position(moves))
        engine.clear()
        assert engine.score(cur, mask, weak=True) == (expected > 0) - (expected < 0)


def test_best_moves_are_the_moves_of_the_best_score(engine):
    for moves, expected in pons_rows("Test_L2_R1", 15) + pons_rows("Test_L3_R1", 15):
        cur, mask = Oracle.position(classic_position(moves))
        scores = engine.move_scores(cur, mask)
        value, best = engine.best_moves(cur, mask)
        assert value == expected == max(scores.values()), moves
        assert best == [c for c, s in scores.items() if s == value], moves
        assert engine.best_moves(cur, mask, first=True) == (value, best[:1]), moves


def test_the_first_best_move_costs_fewer_tests_than_all():
    """`first=True` stops at the centre-most move that keeps the score: the same move, fewer
    nodes wherever it is not the last one tested (cleared tables: no help from an earlier
    search)."""
    saved = 0
    for moves, _ in pons_rows("Test_L1_R1", 10):
        cur, mask = Oracle.position(classic_position(moves))
        engine = Engine(7, 6, table_size=1 << 16)
        all_best = engine.best_moves(cur, mask)
        all_nodes = engine.nodes
        engine.clear()
        first = engine.best_moves(cur, mask, first=True)
        assert first == (all_best[0], all_best[1][:1]), moves
        assert engine.nodes <= all_nodes, moves
        saved += all_nodes - engine.nodes
    assert saved > 0


def test_move_scores_agree_with_the_python_solver():
    """An independent implementation (bots/alphabeta, Python ints) on every child."""
    engine = Engine(7, 6, table_size=1 << 20)
    solver = Solver(geometry_for(PRESETS["classic"]))
    for moves, _ in pons_rows("Test_L3_R1", 8):
        game = classic_position(moves)
        cur, mask = Oracle.position(game)
        for column, score in engine.move_scores(cur, mask).items():
            child = game.copy()
            outcome = child.push(column + 1)
            if outcome is not None:  # won at once, or the last cell filled
                won = outcome.winner is not None
                assert score == ((42 - mask.bit_count() + 1) // 2 if won else 0), moves
                continue
            side = child.to_move - 1
            solver.reset()
            assert -solver.solve(child.boards[side], child.boards[1 - side]) == score, moves


def test_a_search_over_its_node_budget_gives_none_and_spoils_nothing():
    engine = Engine(7, 6, table_size=1 << 20)
    moves, expected = pons_rows("Test_L1_R1", 3)[1]
    cur, mask = Oracle.position(classic_position(moves))
    assert engine.score(cur, mask, nodes=50) is None
    assert engine.nodes > 50
    assert engine.best_moves(cur, mask, nodes=50) is None
    assert engine.score(cur, mask) == expected


def test_only_four_in_a_row_on_63_bits_fits():
    assert fits(7, 6, 4) and fits(9, 6, 4) and not fits(9, 7, 4) and not fits(7, 6, 5)
    with pytest.raises(ValueError, match="63 bits"):
        Engine(9, 7)
    assert solvable(PRESETS["classic"]) and solvable(parse_variant("classic:5x4"))
    for spec in ("popout", "five", "classic:9x7", "classic:7x6,max-plies=30",
                 "classic,rule=misere"):
        try:
            variant = parse_variant(spec)
        except ValueError:
            continue  # a rule this build does not register
        assert not solvable(variant), spec


def test_book_lookup_serves_the_mirror_image_and_survives_a_round_trip(tmp_path):
    game = classic_position("1123")
    cur, mask = Oracle.position(game)
    mirrored = classic_position("7765")
    mcur, mmask = Oracle.position(mirrored)
    assert (mirror(cur, 7, 6), mirror(mask, 7, 6)) == (mcur, mmask)
    assert book_key(cur, mask, 7, 6) == book_key(mcur, mmask, 7, 6)
    book = Book.from_entries(7, 6, {book_key(cur, mask, 7, 6): -3})
    book.save(tmp_path / "book.npz")
    assert [p.name for p in tmp_path.iterdir()] == ["book.npz"]  # written aside, then renamed
    loaded = Book.load(tmp_path / "book.npz")
    assert loaded.score(mcur, mmask) == -3 and loaded.score(cur, mask) == -3
    assert loaded.score(*Oracle.position(classic_position("4"))) is None
    assert len(loaded) == 1


def test_a_position_whose_children_are_all_booked_needs_no_search():
    variant = parse_variant("classic:5x4")
    engine = Engine(5, 4, table_size=1 << 20)
    root = Game(variant)
    entries = {}
    for move in root.legal_moves():
        child = root.copy()
        child.push(move)
        cur, mask = Oracle.position(child)
        entries[book_key(cur, mask, 5, 4)] = engine.score(cur, mask)
    exact = engine.best_moves(0, 0)
    fresh = Engine(5, 4, table_size=1 << 20)
    oracle = Oracle(variant, engine=fresh, book=Book.from_entries(5, 4, entries))
    value, best = oracle.best_moves(root, nodes=10)  # far too few nodes to search anything
    assert (value, [c - 1 for c in best]) == exact


def test_book_move_scores_equal_the_solved_scores_of_every_move():
    """Book.move_scores (pure Python, for bots) against the engine, on 5x4 positions from random
    play (immediate wins, moves that hand the opponent a win, a last empty cell), with a book of
    the children the builder would store: none over, none with a win on the move."""
    import random

    variant = parse_variant("classic:5x4")
    engine = Engine(5, 4, table_size=1 << 20)
    rng = random.Random(5)
    positions = []
    while len(positions) < 60:
        game = Game(variant)
        for _ in range(rng.randrange(0, 19)):
            game.push(rng.choice(game.legal_moves()))
            if game.outcome is not None:
                break
        if game.outcome is None:
            positions.append(Oracle.position(game))
    entries = {}
    for cur, mask in positions:
        for column in range(5):
            move = engine.possible(mask) & engine.column_masks[column]
            after = mask | move
            if move and not move & engine.wins_now(cur, mask) and after != engine.board_mask \
                    and not engine.wins_now(cur ^ mask, after):
                entries[book_key(cur ^ mask, after, 5, 4)] = engine.score(cur ^ mask, after)
    book = Book.from_entries(5, 4, entries)
    kinds = set()
    for cur, mask in positions:
        expected = engine.move_scores(cur, mask)
        assert book.move_scores(cur, mask) == expected
        kinds.update("win" if s == (20 - mask.bit_count() + 1) // 2 else
                     "handed" if s == -((20 - mask.bit_count()) // 2) else "booked"
                     for s in expected.values())
    assert kinds == {"win", "handed", "booked"}  # every way a move is settled was met
    # best_move: the position's score (here from its children) and its centre-most best move
    centre_first = [2, 1, 3, 0, 4]
    for cur, mask in positions:
        expected = engine.move_scores(cur, mask)
        value = max(expected.values())
        assert book.best_move(cur, mask) == (
            value, next(c for c in centre_first if expected.get(c) == value))
    cur, mask = positions[0]
    assert Book(5, 4).move_scores(cur, mask) is None  # a move outside the book: not settled
    partly = 0
    for cur, mask in positions:  # partial: the moves the rules settle, with their exact scores
        expected = engine.move_scores(cur, mask)
        ruled = Book(5, 4).move_scores(cur, mask, partial=True)
        assert ruled.items() <= expected.items()
        partly += 0 < len(ruled) < len(expected)
    assert partly > 0


def test_book_builder_stores_a_position_and_its_children(tmp_path):
    from arena.solver.book import main as build

    moves, expected = pons_rows("Test_L3_R1", 10)[4]
    (tmp_path / "positions.txt").write_text(f"# a comment\n{moves}\n")
    out = tmp_path / "book.npz"
    assert build([str(tmp_path / "positions.txt"), str(out)]) == 0
    book = Book.load(out)
    game = classic_position(moves)
    assert book.score(*Oracle.position(game)) == expected
    engine = Engine(7, 6, table_size=1 << 20)
    children = 0
    for move in game.legal_moves():
        child = game.copy()
        if child.push(move) is None:
            cur, mask = Oracle.position(child)
            if not engine.wins_now(cur, mask):
                assert book.score(cur, mask) == engine.score(cur, mask)
                children += 1
    assert len(book) == children + 1


def test_weak_best_moves_are_the_moves_that_keep_the_result(engine):
    for moves, expected in pons_rows("Test_L2_R1", 12) + pons_rows("Test_L3_R1", 12):
        cur, mask = Oracle.position(classic_position(moves))
        scores = engine.move_scores(cur, mask)
        engine.clear()
        value, best = engine.best_moves(cur, mask, weak=True)
        sign = (expected > 0) - (expected < 0)
        assert value == sign, moves
        if sign < 0:
            assert best == list(scores), moves  # lost: every move
        else:
            assert best == [c for c, s in scores.items() if (s > 0) - (s < 0) >= sign], moves
        assert engine.best_moves(cur, mask, weak=True, first=True) == (value, best[:1]), moves


def test_a_small_table_on_a_63_bit_board_gives_exact_scores():
    """The table keeps 53 bits of a key and finds the rest from the slot (kernel.KEY_MASK): on
    9x6, keys reach 2**63, and a 1025-entry table makes slots collide all the time."""
    import random

    variant = parse_variant("classic:9x6")
    engine = Engine(9, 6, table_size=1000)  # made odd and large enough
    large, large_shift, small, small_shift, deep_ply = (int(v) for v in engine.tiers)
    for size, shift in ((large, large_shift), (small, small_shift)):
        assert shift == 0 and size % 2 == 1 and size * (kernel.KEY_MASK + 1) >= 1 << 63, size
    assert large == 1025 and deep_ply == 54 - 16 and engine.table.shape[0] == large + small
    assert table_entries(1 << 20) == (1 << 20) + 1 and table_entries(8_388_593) == 8_388_593
    solver = Solver(geometry_for(variant))
    rng = random.Random(5)
    checked = long_keys = 0
    while checked < 12:
        game = Game(variant)
        while len(game.moves) < 38 and game.outcome is None:
            game.push(rng.choice(game.legal_moves()))
        cur, mask = Oracle.position(game)
        if game.outcome is not None or engine.wins_now(cur, mask):
            continue
        long_keys += cur + mask + engine.bottom >= 1 << 53
        engine.clear()
        solver.reset()
        side = game.to_move - 1
        assert engine.score(cur, mask) == solver.solve(game.boards[side], game.boards[1 - side])
        checked += 1
    assert long_keys >= 6


def test_the_positions_of_a_ply_are_the_reference_counts_up_to_mirror_images():
    """`positions_at_ply` (the book builder's `--ply`): one entry per position and mirror image;
    counting a non-symmetric position twice gives OEIS A212693 (shared reference data)."""
    from arena.solver.book import _position, positions_at_ply

    counts = {}
    path = reference_path("connect4", "c4_position_counts.tsv")
    for line in path.read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[0].isdigit():
            counts[int(parts[0])] = int(parts[1])
    for ply in range(0, 5):
        total = 0
        for moves in positions_at_ply(ply).values():
            cur, mask = _position(moves)
            symmetric = (mirror(cur, 7, 6), mirror(mask, 7, 6)) == (cur, mask)
            total += 1 if symmetric else 2
        assert total == counts[ply], ply


def test_the_first_best_move_prefers_a_booked_one_to_a_search(engine):
    """With `first`, a move the book settles as keeping the score is taken with no search,
    even where a more central move (unbooked) keeps it too."""
    for moves, expected in pons_rows("Test_L2_R1", 30):
        cur, mask = Oracle.position(classic_position(moves))
        value, best = engine.best_moves(cur, mask)
        if len(best) >= 2:
            assert value == expected
            break
    else:
        pytest.fail("no position with two best moves")
    column = best[-1]  # not the centre-most best move
    child = (cur ^ mask, mask | (engine.possible(mask) & engine.column_masks[column]))
    book = {book_key(cur, mask, 7, 6): value, book_key(*child, 7, 6): -value}

    def known(c: int, m: int) -> int | None:
        return book.get(book_key(c, m, 7, 6))

    fresh = Engine(7, 6, table_size=1 << 16)
    assert fresh.best_moves(cur, mask, known=known, first=True) == (value, [column])
    assert fresh.nodes == 0
    assert fresh.best_moves(cur, mask, known=known) == (value, best)  # all: every one searched


def test_the_best_move_builder_books_one_best_child_per_position(tmp_path):
    from arena.solver.book import main as build

    rows = pons_rows("Test_L2_R1", 6)
    (tmp_path / "positions.txt").write_text("".join(f"{moves}\n" for moves, _ in rows))
    out = tmp_path / "book.npz"
    argv = ["--best-moves", str(tmp_path / "positions.txt"), str(out), "--processes", "1"]
    assert build(argv) == 0
    book = Book.load(out)
    reference = Engine(7, 6, table_size=1 << 20)
    for moves, expected in rows:
        cur, mask = Oracle.position(classic_position(moves))
        assert book.score(cur, mask) == expected, moves
        # the booked child is the engine's own first best move, found with no search
        first = reference.best_moves(cur, mask, first=True)
        player = Engine(7, 6, table_size=1 << 16)
        assert player.best_moves(cur, mask, known=book.score, first=True) == first, moves
        assert player.nodes == 0, moves
    before = out.read_bytes()
    assert build(argv) == 0  # every position has its booked best move: nothing to do
    assert out.read_bytes() == before


def test_the_ply_builder_solves_only_what_the_book_lacks(tmp_path):
    import shutil

    from arena.solver.book import CLASSIC_BOOK
    from arena.solver.book import main as build

    out = tmp_path / "book.npz"
    shutil.copy(CLASSIC_BOOK, out)
    assert build(["--ply", "2", str(out)]) == 0  # every 2-ply position is booked: nothing to do
    assert out.read_bytes() == CLASSIC_BOOK.read_bytes()
    fresh = tmp_path / "fresh.npz"
    assert build(["--ply", "1", str(fresh), "--nodes", "10", "--processes", "1"]) == 0
    assert not fresh.exists()  # nothing solved within 10 nodes: nothing written
    with pytest.raises(SystemExit):
        build(["--ply", "1"])  # no book file


def test_a_node_rate_spoiled_by_one_slow_search_recovers_from_short_ones():
    from arena.solver.oracle import NodeRate

    rate = NodeRate()
    rate.observe(50_000, 0.5)  # a first search that also paid for loading the machine code
    assert rate.nodes_for(0.05) == 5_000
    for _ in range(30):  # each later search finishes its small budget in 1/5 of its time
        budget = rate.nodes_for(0.05)
        rate.observe(budget, 0.01)
    assert rate.nodes_for(0.05) > 100_000
    rate.observe(1_000_000, 2.0)  # a slow-down is followed at once
    assert rate.rate == 500_000
    rate.observe(1_000, 0.01)  # but not one shown by a short search (its fixed costs)
    assert rate.rate == 500_000


def test_the_first_timed_search_loads_the_kernel_outside_the_clock(monkeypatch):
    import arena.solver.oracle as oracle_module

    loads = []
    monkeypatch.setattr(oracle_module, "warm_up", lambda: loads.append(1))
    oracle = Oracle(PRESETS["classic"], engine=Engine(7, 6, table_size=1 << 16))
    game = classic_position("4455")
    for _ in range(3):
        assert oracle.timed(oracle.score, game, 0.5) is not None
    assert loads == [1]


def test_warming_measures_the_node_rate_once_and_budgets_follow_it(monkeypatch):
    from arena.solver.oracle import CALIBRATION_NODES, NodeRate

    oracle = Oracle(PRESETS["classic"], engine=Engine(7, 6, table_size=1 << 16))
    budgets = []
    search = oracle.engine.score
    monkeypatch.setattr(oracle.engine, "score",
                        lambda *args, **options: budgets.append(options["nodes"]) or search(
                            *args, **options))
    oracle.warm()
    oracle.warm()
    assert budgets == [CALIBRATION_NODES]  # the empty board's search, once
    rate = oracle.rate.rate
    assert rate != NodeRate().rate and rate > 0
    oracle.timed(oracle.score, classic_position(pons_rows("Test_L2_R1", 1)[0][0]), 0.2)
    assert budgets[1:] == pytest.approx([rate * 0.2], rel=0.01)  # one slice


def test_a_timed_search_goes_in_slices_and_reads_the_clock_between_them(monkeypatch):
    """A node budget is only as good as the rate: a position searching slower than the ones
    before (or a machine busier) overran a 1 s move by 0.4 s, a forfeit on time in a game.
    Slices of at most SLICE_S bound the overrun; an unsettled search gives None in time."""
    import time

    from arena.solver.oracle import SLICE_S

    oracle = Oracle(PRESETS["classic"], engine=Engine(7, 6, table_size=1 << 16))
    oracle.warm()
    rate = oracle.rate.rate
    budgets = []

    def never_settles(game, nodes):  # a search that uses its whole slice, slowly
        budgets.append(nodes)
        time.sleep(0.05)
        return None

    start = time.monotonic()
    assert oracle.timed(never_settles, classic_position("44"), 2 * SLICE_S + 0.1) is None
    assert time.monotonic() - start < 2 * SLICE_S + 0.1 + 0.2  # generous: a loaded machine
    assert len(budgets) >= 3 and max(budgets) <= int(rate * SLICE_S) + 1
    found = oracle.timed(oracle.score, classic_position(pons_rows("Test_L2_R1", 1)[0][0]), 2.0)
    assert found == pons_rows("Test_L2_R1", 1)[0][1]  # the same answer, sliced or not


def test_a_timed_answer_from_the_book_counts_no_nodes():
    oracle = Oracle(PRESETS["classic"], engine=Engine(7, 6, table_size=1 << 16))
    moves = next(m for m, _ in pons_rows("Test_L1_R1", 20) if len(m) > 4)
    oracle.engine.score(*Oracle.position(classic_position(moves)))  # a search, counted
    assert oracle.engine.nodes > 1000
    oracle.warm()  # the rate measured (otherwise the first timed call does it)
    before = oracle.rate.rate
    assert oracle.timed(oracle.score, classic_position("4455"), 0.5) is not None  # booked
    assert oracle.engine.nodes == 0
    assert oracle.rate.rate == before


def test_a_value_from_children_settles_a_move_that_hands_the_opponent_a_win(engine):
    """A child where the opponent wins at once is never booked: the rules give its score."""
    for moves, score in pons_rows("Test_L2_R1", 60):
        cur, mask = Oracle.position(classic_position(moves))
        children = [(cur ^ mask, mask | (engine.possible(mask) & engine.column_masks[c]))
                    for c in range(7) if engine.possible(mask) & engine.column_masks[c]]
        handing = [child for child in children if engine.wins_now(*child)]
        if handing and len(handing) < len(children) and not engine.wins_now(cur, mask):
            expected = score
            break
    else:
        pytest.fail("no position with a move that hands the opponent a win")
    booked = {book_key(*child, 7, 6): engine.score(*child) for child in children
              if child not in handing and child[1] != engine.board_mask}

    def known(c: int, m: int) -> int | None:
        return booked.get(book_key(c, m, 7, 6))

    assert engine.value_from_children(cur, mask, known) == expected


def test_without_numba_the_plain_python_solver_is_exact_and_silent():
    """Where numba is missing the kernel runs as plain Python on numpy integers: its products
    must wrap silently as the compiled ones do (numpy warned of an overflow at each hash) and
    give the same scores. A fresh interpreter without numba, warnings as errors."""
    import subprocess

    (moves, expected), = pons_rows("Test_L2_R1", 1)  # a middle game: the table's hashes run
    code = ("import sys; sys.modules['numba'] = None\n"
            "from arena.game import PRESETS, Game\n"
            "from arena.solver import kernel\n"
            "from arena.solver.engine import Engine\n"
            "from arena.solver.oracle import Oracle\n"
            "assert not kernel.COMPILED\n"
            "game = Game(PRESETS['classic'])\n"
            f"for digit in {moves!r}: game.push(int(digit))\n"
            "print(Engine(7, 6, table_size=1 << 12).score(*Oracle.position(game)))\n")
    run = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                         text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert int(run.stdout) == expected
