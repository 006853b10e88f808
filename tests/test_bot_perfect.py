"""The perfect bot: optimal moves on Pons' reference positions (judged by bots/alphabeta's
independent pure-Python solver), its best search elsewhere, and a real game through the arena."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.bitboard import geometry_for
from arena.game import PRESETS, Game, parse_variant
from tests.bot_helpers import play_game

pytest.importorskip("numba", reason="the exact solver needs numba, a dependency: pip install -e .")

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "bots" / "perfect"
sys.path.insert(0, str(BOT))
sys.path.insert(0, str(ROOT / "bots" / "alphabeta"))

from perfect_player import PerfectPlayer  # noqa: E402
from search import Solver  # noqa: E402

REFERENCE = next((p / "shared" / "reference" / "connect4" for p in (ROOT.parent, ROOT.parent.parent)
                  if (p / "shared" / "reference" / "connect4").is_dir()), ROOT / "bench" / "data" / "connect4")


def sample(name: str, count: int) -> list[tuple[str, int]]:
    path = REFERENCE / name
    if not path.is_file():
        pytest.skip(f"Pons' set {name} not found")
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    step = max(1, len(rows) // count)
    return [(moves, int(score)) for moves, score in rows[3::step][:count]]


def child_score(solver: Solver, game: Game, move: int) -> int:
    """Exact score, for the side that played `move`, of the position after it."""
    child = game.copy()
    outcome = child.push(move)
    if outcome is not None:
        return (43 - game.ply) // 2 if outcome.winner is not None else 0
    side = child.to_move - 1
    solver.reset()
    return -solver.solve(child.boards[side], child.boards[1 - side])


@pytest.mark.parametrize("name, count", [("Test_L3_R1", 30), ("Test_L2_R1", 30), ("Test_L1_R1", 12)])
def test_keeps_the_exact_value_of_pons_positions(name, count):
    """A won position stays won as fast as possible, a drawn one drawn, a lost one is lost as
    slowly as possible: the move's score equals the position's reference score."""
    player = PerfectPlayer(PRESETS["classic"])
    solver = Solver(geometry_for(PRESETS["classic"]))
    for moves, expected in sample(name, count):
        game = Game(PRESETS["classic"])
        for digit in moves:
            game.push(int(digit))
        # a generous deadline: this test is about the choice, the machine may be loaded
        move = player.choose(game, time.monotonic() + 20.0)
        assert player.last.startswith("exact"), (moves, player.last)
        assert child_score(solver, game, move) == expected, moves


def test_an_immediate_win_is_taken_and_a_draw_is_kept():
    player = PerfectPlayer(PRESETS["classic"])
    game = Game(PRESETS["classic"])
    for m in (4, 1, 4, 1, 4, 2):
        game.push(m)
    assert player.choose(game, time.monotonic() + 5.0) == 4


@pytest.mark.parametrize("spec", ["popout", "five", "classic:9x7"])
def test_other_variants_get_the_search_and_say_so(spec):
    variant = parse_variant(spec)
    players = [PerfectPlayer(variant), PerfectPlayer(variant)]
    game = play_game(variant, players, move_s=0.05)
    assert game.outcome is not None
    assert players[0].last in ("search (not proven)", "only move")


def test_small_boards_are_played_exactly():
    variant = parse_variant("classic:5x4")
    players = [PerfectPlayer(variant), PerfectPlayer(variant)]
    game = play_game(variant, players, move_s=1.0)
    assert players[0].last.startswith("exact")
    # 5x4 is a draw (Tromp): perfect play on both sides cannot end otherwise
    assert game.outcome.winner is None


def test_plays_a_game_through_the_arena_and_announces_exact_play():
    """`arena play` with the bot folder: from a won Pons position with the bot to move, it wins,
    and its handshake version names where its play is exact."""
    moves, _ = next((m, s) for m, s in sample("Test_L3_R1", 60) if s > 0 and len(m) % 2 == 0)
    opening = " ".join(f"d{d}" for d in moves)
    out = subprocess.run(
        [sys.executable, "-m", "arena", "play", str(BOT), "random", "--games", "1",
         "--move-ms", "2000", "--opening", opening, "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=240,
    )
    assert out.returncode == 0, out.stderr
    game = json.loads(out.stdout.splitlines()[-1])
    assert game["first"] == "perfect" and game["result"] == 1.0 and game["reason"] == "line", game
    # "...+search-only-no-numba" means numba (a dependency in pyproject.toml) is not installed
    assert game["first_version"] == "1.0+exact-drop-only-connect4"


def test_the_book_plays_the_first_move_and_agrees_with_the_reference():
    """The bundled book's first level equals the reference scores of the seven first moves
    (shared/reference/connect4/c4_solver_vectors.tsv, from an independent solver), and it makes
    the first move from the empty board exact and immediate."""
    from arena.solver.oracle import Oracle

    vectors = REFERENCE / "c4_solver_vectors.tsv"
    if not vectors.is_file():
        pytest.skip("shared reference data not found")
    line = next(row for row in vectors.read_text().splitlines()
                if row.startswith("(empty) per-column"))
    reference = [int(x) for x in line.split("\t")[1].split()]
    oracle = Oracle(PRESETS["classic"])
    for column in range(1, 8):
        game = Game(PRESETS["classic"])
        game.push(column)
        assert -oracle.book.score(*oracle.position(game)) == reference[column - 1], column
    player = PerfectPlayer(PRESETS["classic"])
    # between games, as the bot does: the solver's first warm-up (its table mapped, the node
    # rate measured, numba's code loaded if no test before did) is no part of a move's time,
    # and with the cores busy it took 0.2 s, or 0.45-0.65 s in a fresh process, of the 0.5
    player.new_game()
    start = time.monotonic()
    assert player.choose(Game(PRESETS["classic"]), start + 1.0) == 4
    assert player.last == "exact score 1" and time.monotonic() - start < 0.5


def test_the_book_is_consistent_with_itself():
    """Every booked position whose children are all booked has the best of their scores: one
    wrong entry among them would show (re-solving them takes minutes each)."""
    from itertools import product

    from arena.solver.oracle import Oracle

    oracle = Oracle(PRESETS["classic"])
    book, engine = oracle.book, oracle.engine
    checked = {}
    for length in range(0, 5):
        for moves in product(range(1, 8), repeat=length):
            game = Game(PRESETS["classic"])
            for m in moves:
                game.push(m)
            cur, mask = oracle.position(game)
            booked = book.score(cur, mask)
            derived = engine.value_from_children(cur, mask, book.score)
            if booked is not None and derived is not None:
                assert booked == derived, moves
                checked[length] = checked.get(length, 0) + 1
    # every position up to ply 3 (their children, up to ply 4, are all booked), and the ply-4
    # positions whose children the partial ply 5 holds
    assert (checked.get(0), checked.get(1), checked.get(2), checked.get(3)) == (1, 7, 49, 343), \
        checked
    assert checked.get(4, 0) >= 1400, checked  # 1,489 of the 2,401 four-move lines (1,640 of ply 5)


# positions of plies 5 and 6 (of 2,144 and 8,231, up to mirror images) with a booked best move
SETTLED_5, SETTLED_6 = 1700, 4500


def test_the_books_best_moves_keep_their_positions_scores():
    """Deeper, the builder's `--best-moves` books a position's score and one best child: no
    booked child may score better than its position, and the booked children whose result the
    solver proves within a small budget have that result (a child stored with the wrong sign
    would show)."""
    from arena.solver.book import _position, positions_at_ply
    from arena.solver.oracle import Oracle

    oracle = Oracle(PRESETS["classic"])
    book, engine = oracle.book, oracle.engine
    settled = {}
    resolved: list[int] = []
    tries = 0
    for ply in (5, 6):
        for moves in positions_at_ply(ply).values():
            cur, mask = _position(moves)
            value = book.score(cur, mask)
            if value is None:
                continue
            scores = book.move_scores(cur, mask, partial=True)
            assert max(scores.values(), default=value) <= value, moves
            best = book.best_move(cur, mask)
            if best is None:
                continue
            settled[ply] = settled.get(ply, 0) + 1
            child = _position(moves + str(best[1] + 1))
            wanted = resolved.count(1) < 2 or -1 not in resolved
            booked_child = None if child is None else book.score(*child)
            # the result alone (much cheaper), within a budget: a wrong sign shows there. Only
            # children the book scores as decided within about ten moves (|score| >= 6): those
            # proofs take milliseconds, where a close one can exhaust the budget (0.25 s each)
            if ply == 6 and wanted and tries < 60 and booked_child is not None \
                    and abs(booked_child) >= 6:
                tries += 1
                solved = engine.score(*child, weak=True, nodes=1_000_000)
                if solved is not None and engine.nodes > 1000:  # not a trivial one
                    assert solved == (booked_child > 0) - (booked_child < 0), moves
                    resolved.append(solved)
    assert settled.get(5, 0) >= SETTLED_5 and settled.get(6, 0) >= SETTLED_6, settled
    assert resolved.count(1) >= 2 and -1 in resolved, resolved


def test_the_bot_keeps_the_players_of_its_last_three_variants_only():
    """Each player holds 64 MiB of solver table and the fallback's tables: a process that met
    ten board sizes ran out of the sandbox's 1 GiB (and then played fallback moves)."""
    from perfect import MAX_PLAYERS, Players

    players = Players()
    sizes = [parse_variant(f"classic:{c}x{r}") for c, r in ((4, 4), (5, 4), (5, 5), (6, 5), (6, 6))]
    kept = [players.get(variant) for variant in sizes]
    assert len(players) == MAX_PLAYERS == 3
    assert players.get(sizes[-1]) is kept[-1] and players.get(sizes[2]) is kept[2]
    assert players.get(sizes[0]) is not kept[0]  # dropped: made again


def test_a_new_game_makes_the_fallbacks_tables_outside_the_move():
    """Making the compiled search's tables took 30 ms and more, inside the first move of a new
    board size (it overran 50 ms by 70 ms): `new_game` makes them, between games."""
    compiled = pytest.importorskip("compiled")  # bots/alphabeta's compiled search
    compiled.warm_up()
    player = PerfectPlayer(parse_variant("classic:6x5"))
    player.new_game()
    assert player.fallback is not None and player.fallback.fast is not None


class ScriptedOracle:
    """An oracle whose answers are given: the result (weak) search, then the exact one."""

    def __init__(self, result, exact) -> None:
        self.answers = {True: result, False: exact}
        self.asked: list[str] = []

    def best_moves(self, game, nodes=None, weak=False, first=False):
        return self.answers[weak]

    def timed(self, method, game, seconds, **options):
        self.asked.append("result" if options.get("weak") else "exact")
        return method(game, **options)


@pytest.mark.parametrize(("result", "exact", "move", "asked", "last"), [
    # a draw: its result is its exact score, and any move that keeps it is perfect play
    ((0, [5]), None, 5, ["result"], "exact score 0"),
    ((1, [3]), (7, [2]), 2, ["result", "exact"], "exact score 7"),  # the fastest win
    ((1, [3]), None, 3, ["result", "exact"], "exact result +1"),  # a win, perhaps not the fastest
    ((-1, [1]), (-3, [6]), 6, ["result", "exact"], "exact score -3"),  # the slowest loss
])
def test_the_result_comes_first_and_a_draw_needs_no_exact_score(result, exact, move, asked, last):
    """Off the book the exact score of a drawn position often does not fit in a move while its
    result does: perfect proves the result first, and a draw ends the search there. Measured
    at 1 s on 288 positions of plies 6-12, each move judged by the solver (see
    bench/strength.py's `optimal`): 281 optimal moves, 269 with the exact score sought first."""
    player = PerfectPlayer(PRESETS["classic"])
    player.oracle = ScriptedOracle(result, exact)
    game = Game(PRESETS["classic"])
    for m in (4, 4, 3, 5, 2, 6, 4, 4):
        game.push(m)
    assert player.choose(game, time.monotonic() + 5.0) == move
    assert player.oracle.asked == asked and player.last == last


def test_without_a_proof_or_in_a_lost_position_the_search_moves():
    game = Game(PRESETS["classic"])
    for m in (4, 4, 3, 5, 2, 6, 4, 4):
        game.push(m)
    for result, last in ((None, "search (not proven)"), ((-1, [1]), "search within the proven result -1")):
        player = PerfectPlayer(PRESETS["classic"])
        player.oracle = ScriptedOracle(result, None)
        assert player.choose(game, time.monotonic() + 0.3) in game.legal_moves()
        assert player.last == last
