"""`arena analyze` on one process and on several: the time, and the speed-up.

    python bench/analyze.py [--games 20] [--budget-ms 200] [--processes N] [--repeat 1]

Plays `--games` classic games between two noisy `alphabeta --level medium` players (in-process,
seeded, a random first move), writes them as a games file, and times `arena analyze FILE
--redo -j 1` and `-j N` (N: the cores by default) in alternating runs, best of `--repeat`
each. Prints `name: value unit` lines: both times, `analyze_speedup` (one process over N) and
whether both stored the same values (`analyze_same_values`; positions near a budget's edge may
settle in one run and not the other on a loaded machine, so 0 is a note, not a failure).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from strength import medium_game  # noqa: E402  (the same games as bench/strength.py's)

from arena.game import format_move  # noqa: E402
from arena.tournament.config import default_concurrency  # noqa: E402


def games_file(path: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    lines = []
    for number in range(count):
        *_, game = medium_game(rng, seed, number)
        winner = game.outcome.winner
        lines.append(json.dumps({
            "game_id": f"g{number + 1}", "first": "A", "second": "B", "variant": "classic",
            "result": 0.5 if winner is None else float(winner == 1),
            "moves": " ".join(format_move(m) for m in game.moves)}))
    path.write_text("\n".join(lines) + "\n")


def timed_analyze(path: Path, budget_ms: int, processes: int) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "arena", "analyze", str(path), "--redo",
                    "--budget-ms", str(budget_ms), "-j", str(processes)],
                   check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - start


def stored_values(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT game_key, ply, before, after FROM analysed_moves "
                            "ORDER BY game_key, ply").fetchall()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--budget-ms", type=int, default=200)
    parser.add_argument("--processes", type=int, default=default_concurrency())
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="arena-bench-analyze-") as scratch:
        one, many = Path(scratch) / "one.jsonl", Path(scratch) / "many.jsonl"
        games_file(one, args.games, args.seed)
        many.write_text(one.read_text())
        times: dict[int, list[float]] = {1: [], args.processes: []}
        for _ in range(args.repeat):
            times[1].append(timed_analyze(one, args.budget_ms, 1))
            times[args.processes].append(timed_analyze(many, args.budget_ms, args.processes))
        same = stored_values(Path(f"{one}.analysis.db")) == stored_values(Path(f"{many}.analysis.db"))
    best_one, best_many = min(times[1]), min(times[args.processes])
    print(f"analyze_games: {args.games} count")
    print(f"analyze_processes: {args.processes} count")
    print(f"analyze_1_process_time: {best_one:.2f} s")
    print(f"analyze_{args.processes}_processes_time: {best_many:.2f} s")
    print(f"analyze_speedup: {best_one / best_many:.2f} ratio")
    print(f"analyze_same_values: {int(same)} bool")
    return 0


if __name__ == "__main__":
    sys.exit(main())
