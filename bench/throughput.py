"""Tournament throughput: games per second at concurrency 1 and at the number of cores.

Plays a round-robin of fast bots (the bundled random bot under several seeds) in a scratch
directory, once with one game at a time and once with one per core, and prints
`name: value unit` lines, including the speed-up (goal: at least 0.8 x the number of cores).
Each setting is run `--repeat` times and the best rate is kept, as other work on the machine
only ever slows a run down; the load average before the runs is printed for context.

    python bench/throughput.py [--games 100] [--bots 4] [--variant classic] [--cores N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from arena.tournament.config import default_concurrency, load_config
from arena.tournament.progress import Progress
from arena.tournament.runner import Runner


def make_file(folder: Path, bots: int, games: int, variant: str) -> Path:
    lines = [
        'name = "bench"',
        f'variants = ["{variant}"]',
        f"games = {games}",
        "[time]",
        "move_ms = 1000",
    ]
    for i in range(bots):
        lines += ["[[bots]]", 'path = "random"', f'name = "random{i}"', f'args = ["--seed", "{i}"]']
    path = folder / "bench.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def games_per_second(path: Path, concurrency: int, output: Path,
                     mode: str = "process") -> tuple[float, int]:
    config = load_config(path, concurrency=concurrency)
    config.output = output
    runner = Runner(config, progress_factory=lambda *a, **k: Progress(*a, quiet=True, **k),
                    install_signals=False, mode=mode)
    started = time.perf_counter()
    result = runner.run()
    elapsed = time.perf_counter() - started
    if result.played != result.total or result.forfeits:
        sys.exit(f"bench: {result.played}/{result.total} games, {result.forfeits} forfeits")
    return result.played / elapsed, result.played


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100,
                        help="games per pairing (even); enough that the bots' start-up, a fixed cost"
                        " per bot and worker, does not dominate")
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting (best is kept)")
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--cores", type=int, default=default_concurrency())
    parser.add_argument("--mode", choices=["process", "thread"], default="process",
                        help="workers as processes (default) or threads")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as scratch:
        folder = Path(scratch)
        path = make_file(folder, args.bots, args.games, args.variant)
        one = many = 0.0
        n_games = 0
        for i in range(args.repeat):  # alternate, keep the best: other load on the machine
            rate, n_games = games_per_second(path, 1, folder / f"c1-{i}", args.mode)
            one = max(one, rate)
            rate, _ = games_per_second(path, args.cores, folder / f"cn-{i}", args.mode)
            many = max(many, rate)
    speedup = many / one if one else 0.0
    print(f"games_per_run: {n_games} games")
    print(f"cores: {args.cores} cores")
    print(f"load_average_before: {load:.2f} processes")
    print(f"throughput_concurrency_1: {one:.2f} games/s")
    print(f"throughput_concurrency_{args.cores}: {many:.2f} games/s")
    print(f"speedup: {speedup:.2f} x")
    print(f"speedup_goal: {0.8 * args.cores:.2f} x")
    print(f"speedup_per_core: {speedup / args.cores:.2f} ratio")


if __name__ == "__main__":
    main()
