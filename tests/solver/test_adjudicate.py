"""Solver adjudication: a proven result equals the result of playing the game out perfectly."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.game import PRESETS, Game, parse_variant
from arena.solver.adjudicate import Verdict, adjudicate, oracle_for

pytest.importorskip("numba", reason="the exact solver needs numba, a dependency: pip install -e .")

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = next((p / "shared" / "reference" / "connect4" for p in (ROOT.parent, ROOT.parent.parent)
                  if (p / "shared" / "reference" / "connect4").is_dir()), ROOT / "bench" / "data" / "connect4")


def pons(name: str, count: int) -> list[tuple[str, int]]:
    path = REFERENCE / name
    if not path.is_file():
        pytest.skip(f"Pons' set {name} not found")
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    step = max(1, len(rows) // count)
    return [(m, int(s)) for m, s in rows[::step][:count]]


def start(moves: str, spec: str = "classic") -> Game:
    game = Game(parse_variant(spec))
    for digit in moves:
        game.push(int(digit))
    return game


def perfect_play_out(game: Game) -> Game:
    """Both sides play the solver's perfect moves to the end."""
    oracle = oracle_for(game.variant)
    while game.outcome is None:
        _, best = oracle.best_moves(game)
        game.push(best[0])
    return game


@pytest.mark.parametrize("name", ["Test_L3_R1", "Test_L2_R1"])
def test_adjudicated_results_equal_perfect_play_out(name):
    for moves, expected in pons(name, 12):
        game = start(moves)
        verdict = adjudicate(game, budget_s=10.0)
        assert verdict is not None, moves
        mover = game.to_move
        want = None if expected == 0 else (mover if expected > 0 else 3 - mover)
        assert verdict.winner == want and verdict.ply == len(moves), moves
        final = perfect_play_out(game.copy())
        assert final.outcome.winner == verdict.winner, moves
        assert verdict.result == {1: 1.0, 2: 0.0, None: 0.5}[final.outcome.winner]


def test_no_verdict_without_a_proof_in_the_budget():
    # ten plies in, past the book (which holds every position of plies 0-8 and the best
    # replies after them, "176534127" among them): a third of a second of solving, not a
    # millisecond
    game = start("1765341271")
    oracle = oracle_for(game.variant)
    assert oracle.book.score(*oracle.position(game)) is None, "booked now: pick a deeper position"
    assert adjudicate(game, budget_s=0.001) is None


def test_no_verdict_where_the_solver_does_not_apply_or_the_game_is_over():
    assert adjudicate(start("1212", "popout"), budget_s=1.0) is None
    assert adjudicate(start("3434", "five"), budget_s=1.0) is None
    over = start("1212121")
    assert over.outcome is not None and adjudicate(over, budget_s=1.0) is None


def test_small_boards_are_adjudicated_from_the_start():
    # Tromp: 5x4 is a draw, 6x4 a win for the second player
    assert adjudicate(start("", "classic:5x4"), budget_s=30.0) == Verdict(None, 0.5, 0)
    assert adjudicate(start("", "classic:6x4"), budget_s=30.0) == Verdict(2, 0.0, 0)


def test_one_oracle_per_variant_is_reused():
    assert oracle_for(PRESETS["classic"]) is oracle_for(parse_variant("classic"))
    assert oracle_for(parse_variant("popout")) is None
