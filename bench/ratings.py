"""Benchmark: standings for 100 bots and 1,000,000 synthetic games.

Run: ``python bench/ratings.py [--bots 100] [--games 1000000] [--seed 1] [--rounds 1]``.
Prints one ``name: value unit`` line per measure: the time of each stage, the accuracy of the
maximum-likelihood ratings against the true ratings the games were drawn from, and the
end-to-end case of issue 13: ``arena standings games.csv`` on a CSV of all the games against the
floor of reading that CSV, counting and fitting (both as fresh processes, interleaved;
``standings_1m_vs_floor`` is their ratio, ``..._peak_memory`` the processes' peak RSS).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Like the arena commands: one BLAS thread for small linear algebra, set before numpy loads.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from arena.ratings import (  # noqa: E402
    compute_standings,
    count_games,
    fit_elo,
    pairwise_table,
    sequential_elo,
    trueskill_ratings,
)
from arena.ratings.elo import ELO_PER_NAT  # noqa: E402


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


def timed(label: str, fn, results: list[tuple[str, float, str]]):
    t0 = time.perf_counter()
    out = fn()
    results.append((label, time.perf_counter() - t0, "s"))
    return out


ROOT = Path(__file__).resolve().parents[1]
FLOOR = """
import sys
import pandas as pd
from arena.ratings.elo import count_pairs, fit_elo
games = pd.read_csv(sys.argv[1])
fit_elo(count_pairs(games["first"], games["second"], games["result"]))
"""


# Runs the measured command as its own child and prints that child's peak memory. A child of
# this benchmark, large after building a million games, reported at least the benchmark's own
# peak (the kernel starts a forked child's high-water mark from its parent's memory): this small
# launcher's child starts from the launcher's.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, file=sys.stderr)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_process(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB) of one process run to its end."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    env.pop("COLUMNS", None)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", LAUNCHER, *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - t0
    err = proc.stderr.decode(errors="replace").strip()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {err[-500:]}")
    return wall, int(err.splitlines()[-1]) / 1024.0  # ru_maxrss is in KB on Linux


def command_case(games: pd.DataFrame, rounds: int) -> list[tuple[str, float, str]]:
    """`arena standings` on a CSV of the games vs the read+count+fit floor, interleaved."""
    label = "1m" if len(games) == 1_000_000 else f"{len(games)}games"
    cases = {
        "floor": [sys.executable, "-c", FLOOR],
        "standings": [sys.executable, "-m", "arena", "standings"],
        "no_trueskill": [sys.executable, "-m", "arena", "standings", "--no-trueskill"],
    }
    times: dict[str, list[float]] = {k: [] for k in cases}
    peaks: dict[str, float] = dict.fromkeys(cases, 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "games.csv"
        games.to_csv(path, index=False)
        for _ in range(rounds):
            for name, args in cases.items():
                wall, peak = run_process([*args, str(path)])
                times[name].append(wall)
                peaks[name] = max(peaks[name], peak)
    med = {k: float(np.median(v)) for k, v in times.items()}
    return [
        (f"standings_{label}_seconds", med["standings"], "s"),
        (f"standings_{label}_no_trueskill_seconds", med["no_trueskill"], "s"),
        (f"standings_{label}_floor_seconds", med["floor"], "s"),
        (f"standings_{label}_vs_floor", med["standings"] / med["floor"], "ratio"),
        (f"standings_{label}_no_trueskill_vs_floor", med["no_trueskill"] / med["floor"], "ratio"),
        (f"standings_{label}_trueskill_cost", med["standings"] - med["no_trueskill"], "s"),
        (f"standings_{label}_peak_memory", peaks["standings"], "MB"),
        (f"standings_{label}_no_trueskill_peak_memory", peaks["no_trueskill"], "MB"),
        (f"standings_{label}_floor_peak_memory", peaks["floor"], "MB"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1,
                        help="interleaved runs of the command case (median reported)")
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
    for name, value, unit in command_case(games, max(1, args.rounds)):
        print(f"{name}: {value:.3f} {unit}")


if __name__ == "__main__":
    main()
