"""Benchmark of the alphabeta bot's exact solver on Pascal Pons' test sets.

    python bench/solver.py [--sets Test_L3_R1 Test_L2_R1] [--limit N] [--budget 1.0]
                           [--reference DIR]

For each set it solves every position (exact score on Pons' scale, from a cleared transposition
table), checks the score against the reference, finds a winning move in each won position and
checks it (the position after it must be lost for the opponent), and prints `name: value unit`
lines: share solved (correct and within the budget), mean and worst time, nodes per second.
The same positions are then solved by the compiled engine that `perfect`, `analyze` and the book
use (`arena.solver.engine`, a cleared table each): `{set}_compiled_*` lines.
The test sets (1000 positions each) are read from ../shared/reference/connect4 (relative to the
project root) or `--reference DIR`; without them it runs on the few positions shipped in
bench/data/connect4 (the first lines of the same sets, from Pascal Pons' benchmark,
blog.gamesolver.org, "Solving Connect 4: test protocol") and says so.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bots" / "alphabeta"))

from search import Solver  # noqa: E402

from arena.bitboard import geometry_for  # noqa: E402
from arena.game import PRESETS, Game  # noqa: E402

SHARED = ROOT.parent / "shared" / "reference" / "connect4"
SHIPPED = ROOT / "bench" / "data" / "connect4"
DEFAULT_SETS = ("Test_L3_R1", "Test_L2_R1")


def reference_dir(explicit: Path | None) -> Path:
    """Where the test sets are: `--reference`, else the shared reference data, else the sample
    shipped with the project (with a note on stderr)."""
    if explicit is not None:
        return explicit
    if SHARED.is_dir():
        return SHARED
    print(f"note: Pons' test sets not found at {SHARED} (give --reference DIR): using the "
          f"positions shipped in {SHIPPED.relative_to(ROOT)}", file=sys.stderr)
    return SHIPPED


def load_set(path: Path, limit: int | None = None) -> list[tuple[str, int]]:
    rows = []
    for line in path.read_text().splitlines():
        if line.strip():
            moves, score = line.split()
            rows.append((moves, int(score)))
    return rows[:limit] if limit else rows


def position(moves: str) -> tuple[int, int]:
    game = Game(PRESETS["classic"])
    for digit in moves:
        game.push(int(digit))
    side = game.to_move - 1
    return game.boards[side], game.boards[1 - side]


def solve_one(solver: Solver, moves: str) -> tuple[int, int | None, float, int]:
    """(score, a winning column or None, seconds, nodes) from a cleared table."""
    cur, opp = position(moves)
    solver.reset()
    solver.nodes = 0
    start = time.perf_counter()
    score = solver.solve(cur, opp)
    winning = None
    if score > 0:
        columns = solver.move_values(cur, opp, score)
        winning = columns[0] if columns else None
    return score, winning, time.perf_counter() - start, solver.nodes


def check_win(solver: Solver, moves: str, column: int) -> bool:
    """The opponent loses after `column` (0-based) is played."""
    game = Game(PRESETS["classic"])
    for digit in moves:
        game.push(int(digit))
    if game.push(column + 1) is not None:
        return game.outcome.winner is not None
    side = game.to_move - 1
    solver.reset()
    return solver.solve(game.boards[side], game.boards[1 - side], weak=True) < 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(DEFAULT_SETS))
    parser.add_argument("--limit", type=int, default=None, help="positions per set")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds allowed per position")
    parser.add_argument("--reference", type=Path, default=None,
                        help="folder of Pons' test sets (default: ../shared/reference/connect4, "
                             "else the positions shipped in bench/data/connect4)")
    args = parser.parse_args(argv)
    reference = reference_dir(args.reference)
    missing = [name for name in args.sets if not (reference / name).is_file()]
    if missing:
        print(f"error: test set {missing[0]} not found in {reference}", file=sys.stderr)
        return 2
    solver = Solver(geometry_for(PRESETS["classic"]))
    failed = False
    for name in args.sets:
        rows = load_set(reference / name, args.limit)
        solved = wrong = slow = won = won_ok = 0
        total_time = worst = 0.0
        total_nodes = 0
        for moves, expected in rows:
            score, column, seconds, nodes = solve_one(solver, moves)
            total_time += seconds
            total_nodes += nodes
            worst = max(worst, seconds)
            if score != expected:
                wrong += 1
                print(f"wrong: {moves} expected {expected} got {score}", file=sys.stderr)
            elif seconds > args.budget:
                slow += 1
            else:
                solved += 1
            if expected > 0:
                won += 1
                if column is not None and check_win(solver, moves, column):
                    won_ok += 1
        n = len(rows)
        failed |= solved < n or won_ok < won
        print(f"{name}_positions: {n} count")
        print(f"{name}_solved: {100.0 * solved / n:.1f} %")
        print(f"{name}_wrong: {wrong} count")
        print(f"{name}_over_budget: {slow} count")
        print(f"{name}_winning_move_found: {100.0 * won_ok / max(1, won):.1f} %")
        print(f"{name}_won_positions: {won} count")
        print(f"{name}_mean_time: {1000.0 * total_time / n:.3f} ms")
        print(f"{name}_worst_time: {1000.0 * worst:.3f} ms")
        print(f"{name}_mean_nodes: {total_nodes / n:.0f} nodes")
        print(f"{name}_nodes_per_second: {total_nodes / total_time:.0f} nodes/s")
        failed |= compiled_lines(name, rows)
    return 1 if failed else 0


def compiled_lines(name: str, rows: list[tuple[str, int]]) -> bool:
    """Print the compiled engine's lines for one set; True if it got a score wrong."""
    from arena.solver.engine import Engine, warm_up

    warm_up()  # the machine code loaded (or compiled) before the clock starts
    engine = Engine(7, 6)
    wrong = 0
    total_time = worst = 0.0
    total_nodes = 0
    for moves, expected in rows:
        cur, opp = position(moves)
        engine.clear()
        start = time.perf_counter()
        score = engine.score(cur, cur | opp)
        seconds = time.perf_counter() - start
        total_time += seconds
        worst = max(worst, seconds)
        total_nodes += engine.nodes
        if score != expected:
            wrong += 1
            print(f"wrong (compiled): {moves} expected {expected} got {score}", file=sys.stderr)
    n = len(rows)
    print(f"{name}_compiled_wrong: {wrong} count")
    print(f"{name}_compiled_mean_time: {1000.0 * total_time / n:.3f} ms")
    print(f"{name}_compiled_worst_time: {1000.0 * worst:.3f} ms")
    print(f"{name}_compiled_mean_nodes: {total_nodes / n:.0f} nodes")
    print(f"{name}_compiled_nodes_per_second: {total_nodes / total_time:.0f} nodes/s")
    return wrong > 0


if __name__ == "__main__":
    sys.exit(main())
