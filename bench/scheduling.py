"""League scheduling: games until 16 bots 30 Elo apart are ordered at 95% LOS, active vs round-robin.

No processes: games are drawn from the known true strengths (arena/league/simulate.py), each run
with its own seed, the same seeds for both schedulers. Round-robin is checked after each whole
round, the active scheduler after each batch of 16 pairs (as 16 parallel workers would ask).
Prints `name: value unit` lines; the goal is active_vs_round_robin_games <= 0.5 with a share of
wrongly ordered final rankings no worse than round-robin's.
"""

from __future__ import annotations

import argparse
import statistics
import time

from arena.league.scheduler import SchedulerSettings
from arena.league.simulate import SimulatedField, run_active, run_round_robin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=16)
    parser.add_argument("--spacing", type=float, default=30.0, help="Elo between neighbours")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--max-games", type=int, default=400_000)
    args = parser.parse_args()
    settings = SchedulerSettings()
    strengths = [args.spacing * k for k in range(args.bots)]
    results: dict[str, list] = {"round_robin": [], "active": []}
    started = time.perf_counter()
    for seed in range(args.repeats):
        results["round_robin"].append(run_round_robin(SimulatedField(strengths, seed), settings,
                                                      args.max_games))
        results["active"].append(run_active(SimulatedField(strengths, seed), settings, args.max_games,
                                            seed=seed))
    for name, runs in results.items():
        print(f"{name}_games_median: {statistics.median(r.games for r in runs):.0f} games")
        print(f"{name}_unsettled: {sum(not r.settled for r in runs)} runs")
        print(f"{name}_wrong_order_share: {sum(not r.order_right for r in runs) / len(runs):.3f} ratio")
    ratios = [a.games / r.games for a, r in zip(results["active"], results["round_robin"], strict=True)]
    print(f"active_vs_round_robin_games: {statistics.median(ratios):.3f} ratio")
    print(f"scheduling_bench_seconds: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
