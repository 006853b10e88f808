"""Tournament throughput: games per second at concurrency 1 and at the number of cores.

Plays a round-robin of fast bots (the bundled random bot under several seeds) in a scratch
directory, once with one game at a time and once with one per core, and prints
`name: value unit` lines, including the speed-up (goal: at least 0.8 x the number of cores).
Each setting is run `--repeat` times and the best rate is kept, as other work on the machine
only ever slows a run down; the load average before the runs is printed for context.

Field-size sweep (issue 13, a warm pool sized to the field): the same number of games between
4, 8 and 16 bots, at one game per core, printing `field_16_vs_4` and `field_8_vs_4` (the larger
field's rate over the 4-bot rate; near 1 when bot processes are kept warm for the whole field),
the bot process starts per game of each (`restarts_per_game_field_N`), and the ratio again with
each worker and its bots pinned to a core (`field_16_vs_4_pinned`); with `--unfollowed`, also
without the bots following their worker's core (`field_16_vs_4_unfollowed`), the default
when the games fill the CPUs (arena/affinity.py). The ratios are of the best
rates; `field_16_vs_4_median` (and `_pinned_median`) is the median over rounds of each round's
own ratio, the issue's measure, which one slow round cannot move. By default each field plays
about 2400 games (`--sweep-games`): 10 game pairs per pairing of 16 bots. What is left of the
field's size is then a fixed cost: each worker starts every bot of the field once (about 50 ms of
the machine's CPU per sandboxed Python bot, 20 ms unsandboxed), and no game costs more. The
smallest round-robin (one game pair per pairing: 240 games of 16 bots, under a second of play
for 4 fast bots) is printed too, as `field_16_vs_4_single_round` (and `_pinned`): there the
starts are most of the work, and with sandboxed Python bots no schedule can pass 0.8 (16 bots
must start at least once, against 4: 12 more starts of about 50 ms on 2 cores add about 0.3 s
to 0.7 s of play, and each of the 2 workers starting each bot doubles that).

    python bench/throughput.py [--games 100] [--bots 4] [--variant classic] [--cores N]
    python bench/throughput.py --sweep-only [--sweep-games 2400] [--sandbox off]

CPU affinity (issue 13): the same tournament at one game per core with `affinity = true` and
without, in alternating runs (best of `--repeat` each), printing `throughput_pinned`,
`throughput_unpinned` and `affinity_gain` (pinned over unpinned games/s; > 1: pinning helps).

    python bench/throughput.py --affinity-only [--games 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

from arena import affinity
from arena.tournament import executor
from arena.tournament.config import default_concurrency, load_config
from arena.tournament.progress import Progress
from arena.tournament.runner import Runner

SINGLE_ROUND_GAMES = 240  # one game pair per pairing of 16 bots


def make_file(folder: Path, bots: int, games: int, variant: str, sandbox: str = "auto") -> Path:
    lines = [
        'name = "bench"',
        f'sandbox = "{sandbox}"',
        f'variants = ["{variant}"]',
        f"games = {games}",
        'openings = "none"',  # the random bots vary by their seeds; measured from the empty board
        "[time]",
        "move_ms = 1000",
    ]
    for i in range(bots):
        lines += ["[[bots]]", 'path = "random"', f'name = "random{i}"', f'args = ["--seed", "{i}"]']
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bench.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def games_per_second(path: Path, concurrency: int, output: Path,
                     mode: str = "process") -> tuple[float, int]:
    rate, played, _starts = run_once(path, concurrency, output, mode)
    return rate, played


def run_once(path: Path, concurrency: int, output: Path, mode: str = "process",
             pinned: bool = False, follow: bool = True) -> tuple[float, int, int]:
    """(games per second, games played, bot processes started) of one run; `pinned`: each
    worker and its bots on one core (`affinity = true`); `follow=False`: the bots not pinned
    to their worker's core either (as before the arena did so by default)."""
    config = load_config(path, concurrency=concurrency)
    config.output = output
    config.affinity = pinned
    runner = Runner(config, progress_factory=lambda *a, **k: Progress(*a, quiet=True, **k),
                    install_signals=False, mode=mode)
    started = time.perf_counter()
    with mock.patch.object(executor, "follows", executor.follows if follow else lambda n: False):
        result = runner.run()
    elapsed = time.perf_counter() - started
    if result.played != result.total or result.forfeits:
        sys.exit(f"bench: {result.played}/{result.total} games, {result.forfeits} forfeits")
    return result.played / elapsed, result.played, result.starts


def field_sweep(folder: Path, total_games: int, cores: int, variant: str, mode: str,
                repeat: int, pinned: bool = False, sandbox: str = "auto",
                sizes: tuple[int, ...] = (4, 8, 16),
                follow: bool = True) -> dict[int, list[tuple[float, float]]]:
    """{field size: [(games/s, starts per game) of each round]} for about `total_games` games
    each, the sizes' runs interleaved (a round of each size, `repeat` rounds) so that other work
    on the machine falls on all of them alike; `pinned`: with `affinity = true`; `follow`:
    False turns off the bots' following of their worker's core."""
    paths = {}
    for bots in sizes:
        pairings = bots * (bots - 1) // 2
        games = max(2, 2 * round(total_games / pairings / 2))
        paths[bots] = make_file(folder / f"field{bots}-{total_games}", bots, games, variant,
                                sandbox)
    rounds: dict[int, list[tuple[float, float]]] = {bots: [] for bots in sizes}
    for i in range(repeat):
        for bots in sizes if i % 2 == 0 else sizes[::-1]:  # no size always first
            rate, played, starts = run_once(
                paths[bots], cores, folder / f"field{bots}-{total_games}-{pinned}-{follow}-{i}",
                mode, pinned, follow)
            rounds[bots].append((rate, starts / played))
    return rounds


def best_ratio(rounds: dict[int, list[tuple[float, float]]], bots: int) -> float:
    """The best rate of `bots` over the best rate of 4 bots (other work only slows a run)."""
    return max(rate for rate, _ in rounds[bots]) / max(rate for rate, _ in rounds[4])


def median_ratio(rounds: dict[int, list[tuple[float, float]]], bots: int) -> float:
    """The median over rounds of one round's rate of `bots` over the same round's 4-bot rate:
    the issue's measure (median of interleaved rounds), less flattering than the best."""
    return statistics.median(big[0] / small[0] for big, small in zip(rounds[bots], rounds[4], strict=True))


def affinity_gain(folder: Path, path: Path, cores: int, mode: str,
                  repeat: int) -> tuple[float, float]:
    """(best games/s pinned, best unpinned) at `cores` games at a time, runs alternating."""
    best = {True: 0.0, False: 0.0}
    for i in range(repeat):
        for pinned in (True, False) if i % 2 == 0 else (False, True):  # neither always first
            rate, _, _ = run_once(path, cores, folder / f"aff-{pinned}-{i}", mode, pinned)
            best[pinned] = max(best[pinned], rate)
    return best[True], best[False]


def print_affinity_gain(folder: Path, path: Path, cores: int, mode: str, repeat: int) -> None:
    if not affinity.available():
        print(affinity.UNAVAILABLE_NOTE, file=sys.stderr)
        return
    pinned, unpinned = affinity_gain(folder, path, cores, mode, repeat)
    print(f"throughput_pinned: {pinned:.2f} games/s")
    print(f"throughput_unpinned: {unpinned:.2f} games/s")
    print(f"affinity_gain: {pinned / unpinned:.2f} ratio")


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
    parser.add_argument("--sweep-games", type=int, default=2400,
                        help="games per field size in the field-size sweep (the single-round"
                        " figures play one game pair per pairing of 16 bots: 240)")
    parser.add_argument("--sweep-only", action="store_true",
                        help="only the field-size sweep (4 vs 16 bots)")
    parser.add_argument("--sandbox", choices=["auto", "on", "off"], default="auto",
                        help="the bots' sandbox (default auto: bubblewrap where installed; each "
                        "sandboxed start costs about 7 ms more)")
    parser.add_argument("--unfollowed", action="store_true",
                        help="also the sweep with the bots not following their worker's core "
                        "(field_16_vs_4_unfollowed: the ratio before the arena pinned them)")
    parser.add_argument("--affinity-only", action="store_true",
                        help="only the gain of CPU affinity (pinned vs unpinned games/s)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"load_average_before: {load:.2f} processes")
    print(f"cores: {args.cores} cores")
    print(f"sandbox_{args.sandbox}: 1 bool")
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as scratch:
        folder = Path(scratch)
        if args.affinity_only:
            path = make_file(folder, args.bots, args.games, args.variant, args.sandbox)
            print_affinity_gain(folder, path, args.cores, args.mode, args.repeat)
            return
        sweep = field_sweep(folder, args.sweep_games, args.cores, args.variant, args.mode,
                            args.repeat, sandbox=args.sandbox)
        for bots, rounds in sweep.items():
            rate, per_game = max(rounds)
            print(f"throughput_field_{bots}: {rate:.2f} games/s")
            print(f"restarts_per_game_field_{bots}: {per_game:.3f} starts/game")
        print(f"field_8_vs_4: {best_ratio(sweep, 8):.2f} ratio")
        print(f"field_16_vs_4: {best_ratio(sweep, 16):.2f} ratio")
        print(f"field_16_vs_4_median: {median_ratio(sweep, 16):.2f} ratio")
        single = field_sweep(folder / "single", SINGLE_ROUND_GAMES, args.cores, args.variant,
                             args.mode, args.repeat, sandbox=args.sandbox, sizes=(4, 16))
        print(f"field_16_vs_4_single_round: {best_ratio(single, 16):.2f} ratio")
        if args.unfollowed:
            free = field_sweep(folder, args.sweep_games, args.cores, args.variant, args.mode,
                               args.repeat, sandbox=args.sandbox, sizes=(4, 16), follow=False)
            print(f"field_16_vs_4_unfollowed: {best_ratio(free, 16):.2f} ratio")
            print(f"field_16_vs_4_unfollowed_median: {median_ratio(free, 16):.2f} ratio")
        if affinity.available():  # the same sweeps with each worker and its bots on one core
            pinned = field_sweep(folder, args.sweep_games, args.cores, args.variant, args.mode,
                                 args.repeat, pinned=True, sandbox=args.sandbox, sizes=(4, 16))
            print(f"field_16_vs_4_pinned: {best_ratio(pinned, 16):.2f} ratio")
            print(f"field_16_vs_4_pinned_median: {median_ratio(pinned, 16):.2f} ratio")
            single = field_sweep(folder / "single", SINGLE_ROUND_GAMES, args.cores, args.variant,
                                 args.mode, args.repeat, pinned=True, sandbox=args.sandbox,
                                 sizes=(4, 16))
            print(f"field_16_vs_4_single_round_pinned: {best_ratio(single, 16):.2f} ratio")
        if args.sweep_only:
            return
        path = make_file(folder, args.bots, args.games, args.variant, args.sandbox)
        one = many = 0.0
        n_games = 0
        for i in range(args.repeat):  # alternate, keep the best: other load on the machine
            rate, n_games = games_per_second(path, 1, folder / f"c1-{i}", args.mode)
            one = max(one, rate)
            rate, _ = games_per_second(path, args.cores, folder / f"cn-{i}", args.mode)
            many = max(many, rate)
        print_affinity_gain(folder, path, args.cores, args.mode, args.repeat)
    speedup = many / one if one else 0.0
    print(f"games_per_run: {n_games} games")
    print(f"throughput_concurrency_1: {one:.2f} games/s")
    print(f"throughput_concurrency_{args.cores}: {many:.2f} games/s")
    print(f"speedup: {speedup:.2f} x")
    print(f"speedup_goal: {0.8 * args.cores:.2f} x")
    print(f"speedup_per_core: {speedup / args.cores:.2f} ratio")


if __name__ == "__main__":
    main()
