"""Benchmark: standings for 100 bots and 1,000,000 synthetic games.

Run: ``python bench/ratings.py [--bots 100] [--games 1000000] [--seed 1]``.
Prints one ``name: value unit`` line per measure: the time of each stage and the accuracy of the
maximum-likelihood ratings against the true ratings the games were drawn from.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from arena.ratings.elo import ELO_PER_NAT, count_games, fit_elo
from arena.ratings.pairs import pairwise_table
from arena.ratings.sequential import sequential_elo
from arena.ratings.standings import compute_standings
from arena.ratings.trueskill_ratings import trueskill_ratings


def synthetic_games(bots: int, games: int, seed: int, draw_rate: float = 0.25,
                    first_move: float = 30.0) -> tuple[pd.DataFrame, np.ndarray]:
    """Random pairings; results drawn from the logistic model with draws (Davidson-like)."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 200.0, bots)
    true -= true.mean()
    a = rng.integers(0, bots, games)
    b = (a + rng.integers(1, bots, games)) % bots  # never a == b
    d = (true[a] - true[b] + first_move) / ELO_PER_NAT
    p_first = 1.0 / (1.0 + np.exp(-d))
    u = rng.random(games)
    # score expectation p_first: a draw with probability draw_rate * (1 - |2p - 1|)
    p_draw = draw_rate * (1.0 - np.abs(2.0 * p_first - 1.0))
    p_win = p_first - p_draw / 2.0
    result = np.where(u < p_win, 1.0, np.where(u < p_win + p_draw, 0.5, 0.0))
    names = np.array([f"bot{k:03d}" for k in range(bots)], dtype=object)
    frame = pd.DataFrame({
        "seq": np.arange(1, games + 1), "variant": "classic", "first": names[a],
        "second": names[b], "result": result,
    })
    return frame, true


def timed(label: str, fn, results: list[tuple[str, float, str]]):  # noqa: ANN001, ANN201
    t0 = time.perf_counter()
    out = fn()
    results.append((label, time.perf_counter() - t0, "s"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    results: list[tuple[str, float, str]] = []
    games, true = timed("generate_games", lambda: synthetic_games(args.bots, args.games,
                                                                   args.seed), results)
    counts = timed("count_pairs", lambda: count_games(games), results)
    fit = timed("elo_mle_fit", lambda: fit_elo(counts), results)
    timed("elo_mle_fit_first_move", lambda: fit_elo(counts, first_move=True), results)
    timed("elo_bootstrap_100", lambda: fit_elo(counts, bootstrap=100), results)
    timed("sequential_elo", lambda: sequential_elo(games, k=16), results)
    timed("trueskill", lambda: trueskill_ratings(games), results)
    timed("pairwise_table", lambda: pairwise_table(games), results)
    table = timed("compute_standings_total", lambda: compute_standings(games), results)

    for name, value, unit in results:
        print(f"{name}: {value:.3f} {unit}")
    est = np.array([fit.as_dict()[f"bot{k:03d}"] for k in range(args.bots)])
    print(f"bots: {args.bots} count")
    print(f"games: {len(games)} count")
    print(f"ordered_pairs: {len(counts.wins)} count")
    print(f"mle_newton_iterations: {fit.iterations} count")
    print(f"elo_rmse_vs_truth: {float(np.sqrt(np.mean((est - true) ** 2))):.2f} elo")
    print(f"elo_mean_halfwidth_95: {float(np.mean(fit.hi - fit.lo) / 2):.2f} elo")
    inside = np.mean((true >= fit.lo) & (true <= fit.hi))
    print(f"elo_interval_coverage: {100 * inside:.1f} %")
    print(f"standings_rows: {len(table)} count")
    games_per_s = len(games) / next(v for n, v, _ in results if n == "compute_standings_total")
    print(f"standings_throughput: {games_per_s:.0f} games/s")


if __name__ == "__main__":
    main()
