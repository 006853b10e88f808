"""League scheduling: games until 16 bots 30 Elo apart are ordered at 95% LOS, active vs round-robin.

No processes: games are drawn from the known true strengths (arena/league/simulate.py), each run
with its own seed, the same seeds for both schedulers. Round-robin is checked after each whole
round, the active scheduler after each batch of 16 pairs (as 16 parallel workers would ask).
Prints `name: value unit` lines; the goal is active_vs_round_robin_games <= 0.5 with a share of
wrongly ordered final rankings no worse than round-robin's.

Then the cost of one choice of `league run` on a store of 1,000 and 10,000 games (16 bots):
counted from every stored game at each choice, as the runner did (the baseline, measured here in
the same run), and from `arena.league.tally.StoredTally`, which reads the store once and then only
the new games; two games are stored between choices, as a league stores them.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from arena.league.scheduler import RepeatTracker, Scheduler, SchedulerSettings, balanced_variant
from arena.league.simulate import SimulatedField, run_active, run_round_robin
from arena.league.tally import StoredTally
from arena.ratings.elo import PairCounts, count_pairs
from arena.tournament.store import Store

CHOICE_VARIANTS = ["classic", "popout"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=16)
    parser.add_argument("--spacing", type=float, default=30.0, help="Elo between neighbours")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--max-games", type=int, default=400_000)
    parser.add_argument("--choice-games", default="1000,10000",
                        help="stored games at which to time a league's choice (comma-separated)")
    parser.add_argument("--choices", type=int, default=30, help="choices timed per store size")
    parser.add_argument("--no-simulation", action="store_true",
                        help="only the choice times")
    args = parser.parse_args()
    for games in (int(n) for n in args.choice_games.split(",") if n.strip()):
        choice_times(games, args.bots, args.choices)
    if args.no_simulation:
        return
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


def _insert_games(store: Store, rng: random.Random, bots: list[str], n: int) -> None:
    """`n` decided games between random pairs, in one transaction (a bench needs the rows, not
    `add_game`'s transaction per game)."""
    start = store.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM games").fetchone()[0] + 1
    rows = []
    for seq in range(start, start + n):
        first, second = rng.sample(bots, 2)
        rows.append((f"P{seq:07d}-1", seq, rng.choice(CHOICE_VARIANTS), first, second,
                     rng.choice((1.0, 0.5, 0.0)), "line", 7, " ".join(rng.choices("1234567", k=7)),
                     "", f"P{seq:07d}", "", ""))
    with store.transaction():
        store.conn.executemany(
            "INSERT INTO games(game_id, seq, variant, first, second, result, reason, plies, moves, "
            "opening, pair_id, started_at, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)


def _every_game_counts(store: Store, active: list[str]) -> tuple[PairCounts, Counter]:
    """What `league run` read at each choice before the tally: every stored game, twice."""
    rows = [r for r in store.results() if r[2] is not None]
    names = sorted({*active, *(r[0] for r in rows), *(r[1] for r in rows)})
    counts = count_pairs([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                         names=names)
    by_bot_variant: Counter = Counter()
    for first, second, result, _, variant in store.results():
        if result is not None:
            by_bot_variant[(first, variant)] += 1
            by_bot_variant[(second, variant)] += 1
    return counts, by_bot_variant


def choice_times(games: int, bots: int, choices: int) -> None:
    """Median ms of one choice at `games` stored games, read every time vs tallied."""
    names = [f"bot{k:02d}@1" for k in range(bots)]
    timings: dict[str, list[float]] = {"every_game": [], "tally": []}
    load_ms = 0.0
    for way in timings:
        rng = random.Random(games)
        with tempfile.TemporaryDirectory() as folder, Store(Path(folder)) as store:
            _insert_games(store, rng, names, games)
            scheduler, repeats = Scheduler(seed=1), RepeatTracker(10)
            tally = StoredTally(repeats)
            started = time.perf_counter()
            tally.update(store.conn)  # the run's first look: every game, once
            if way == "tally":
                load_ms = (time.perf_counter() - started) * 1000
            for _ in range(choices):
                _insert_games(store, rng, names, 2)
                started = time.perf_counter()
                tally.update(store.conn)  # both ways: the repeats were tallied before too
                if way == "tally":
                    counts, by_bot_variant = tally.pair_counts(names), tally.by_bot_variant
                else:
                    counts, by_bot_variant = _every_game_counts(store, names)
                (a, b), = scheduler.choose(counts, names, repeating=repeats.repeating())
                balanced_variant(CHOICE_VARIANTS, by_bot_variant, a, b)
                timings[way].append((time.perf_counter() - started) * 1000)
    every, tallied = (statistics.median(timings[w]) for w in ("every_game", "tally"))
    print(f"league_choice_every_game_{games}_games: {every:.2f} ms")
    print(f"league_choice_tally_{games}_games: {tallied:.2f} ms")
    print(f"league_choice_speedup_{games}_games: {every / tallied:.1f} ratio")
    print(f"league_tally_first_read_{games}_games: {load_ms:.1f} ms")


if __name__ == "__main__":
    main()
