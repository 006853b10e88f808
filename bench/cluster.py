"""Dask cluster throughput (issue 12): what playing through `--cluster` costs per game.

Bots that think ~20 ms per move (a seeded random mover that sleeps, so the machine's load
barely changes their speed) play a round-robin three ways: the local executor with one game at
a time, a Dask cluster with one single-thread worker, and the same cluster with two. The
cluster (a `LocalCluster` of worker processes on 127.0.0.1) is started before the timed runs,
which reach it by its tcp:// address as `arena run --cluster` would, so its start-up is not
counted. Prints `name: value unit` lines: games/s of each, the cluster-1 over local-1 ratio
(goal >= 0.9), the 2-over-1 worker ratio (goal >= 1.7 on 2 cores), and the time per game spent
outside the games (scheduling, transfers, the store's commit; the runs' wall time minus the
stored games' durations) on the 1-worker cluster and, for comparison, locally. Each setting
runs `--repeat` times, the best rate kept.

    python bench/cluster.py [--games 4] [--bots 4] [--move-ms 20] [--repeat 2]
"""

from __future__ import annotations

import argparse
import logging
import os
import sqlite3
import sys
import tempfile
import textwrap
import time
from datetime import datetime
from pathlib import Path

from arena.tournament.config import load_config
from arena.tournament.progress import Progress
from arena.tournament.runner import Runner

SLOW_BOT = '''
"""Plays a seeded random legal move after sleeping --ms milliseconds."""
import argparse
import random
import time

from arena.sdk import run_bot

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--ms", type=float, default=20)
args = parser.parse_args()
rng = random.Random(args.seed)


def choose(turn):
    time.sleep(args.ms / 1000)
    return rng.choice(turn.game.legal_moves())


run_bot(choose, name="slow", version="1.0")
'''


def make_file(folder: Path, bots: int, games: int, move_ms: float) -> Path:
    bot = folder / "slow"
    bot.mkdir(parents=True, exist_ok=True)
    (bot / "bot.py").write_text(textwrap.dedent(SLOW_BOT).lstrip())
    (bot / "bot.toml").write_text('name = "slow"\ncommand = "bot.py"\n')
    lines = ['name = "cluster-bench"', 'variants = ["classic"]', f"games = {games}",
             'openings = "none"', "[time]", "move_ms = 1000"]
    for i in range(bots):
        lines += ["[[bots]]", f'path = "{bot}"', f'name = "slow{i}"',
                  f'args = ["--seed", "{i}", "--ms", "{move_ms}"]']
    path = folder / "bench.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def game_seconds(results: Path) -> float:
    """The time the stored games took from their start to their end, summed."""
    conn = sqlite3.connect(results / "games.db")
    try:
        rows = conn.execute("SELECT started_at, finished_at FROM games").fetchall()
    finally:
        conn.close()
    return sum((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
               for start, end in rows)


def rate(path: Path, output: Path, cluster: str | None) -> tuple[float, float]:
    """(games per second, ms per game spent outside the games) of one run, locally at
    concurrency 1 or on `cluster` (with one worker thread, runs are back to back, so the time
    between them is what the executor costs: scheduling, transfers, the coordinator's commit)."""
    config = load_config(path, concurrency=1)
    config.output = output
    config.cluster = cluster
    runner = Runner(config, progress_factory=lambda *a, **k: Progress(*a, quiet=True, **k),
                    install_signals=False)
    started = time.perf_counter()
    result = runner.run()
    elapsed = time.perf_counter() - started
    if result.played != result.total or result.forfeits or result.error:
        sys.exit(f"bench: {result.played}/{result.total} games, {result.forfeits} forfeits, "
                 f"{result.error or 'no error'}")
    overhead = (elapsed - game_seconds(output)) / result.played * 1000
    return result.played / elapsed, overhead


def best_rate(path: Path, folder: Path, label: str, cluster: str | None,
              repeat: int) -> tuple[float, float]:
    """The best (games/s, overhead ms per game) of `repeat` runs: load only ever slows a run."""
    return max(rate(path, folder / f"{label}-{i}", cluster) for i in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="games per pairing (even)")
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--move-ms", type=float, default=20.0, help="each bot's thinking time")
    parser.add_argument("--repeat", type=int, default=2, help="runs per setting (best is kept)")
    args = parser.parse_args()
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        sys.exit("bench: the cluster extra is not installed: pip install -e '.[cluster]'")
    print(f"load_average_before: {os.getloadavg()[0]:.2f} processes")
    with tempfile.TemporaryDirectory(prefix="arena-bench-cluster-") as scratch:
        folder = Path(scratch)
        path = make_file(folder, args.bots, args.games, args.move_ms)
        local, local_overhead = best_rate(path, folder, "local", None, args.repeat)
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, silence_logs=logging.ERROR) as cluster:
            address = cluster.scheduler_address
            one, overhead = best_rate(path, folder, "cluster1", address, args.repeat)
            cluster.scale(2)
            with Client(address) as client:
                client.wait_for_workers(2, timeout=60)
            two, _ = best_rate(path, folder, "cluster2", address, args.repeat)
        games = args.bots * (args.bots - 1) // 2 * args.games
    print(f"games_per_run: {games} games")
    print(f"move_time: {args.move_ms:.0f} ms")
    print(f"throughput_local_1: {local:.2f} games/s")
    print(f"throughput_cluster_1_worker: {one:.2f} games/s")
    print(f"throughput_cluster_2_workers: {two:.2f} games/s")
    print(f"cluster_1_vs_local_1: {one / local:.2f} ratio")
    print(f"cluster_2_vs_1: {two / one:.2f} ratio")
    print(f"overhead_per_game: {overhead:.1f} ms")
    print(f"overhead_per_game_local_1: {local_overhead:.1f} ms")


if __name__ == "__main__":
    main()
