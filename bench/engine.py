"""Rules-engine speed: random-playout plies per second on one core, per preset.

Prints `name: value unit` lines. Goals (one core of a 2-core machine): classic >= 400,000 plies/s,
popout >= 200,000 plies/s.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time

from arena.game import Game, parse_variant

GOALS = {"classic": 400_000, "popout": 200_000}


def playout_rate(spec: str, seconds: float, seed: int = 1) -> float:
    variant = parse_variant(spec)
    rng = random.Random(seed)
    plies = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(50):
            game = Game(variant)
            game.random_playout(rng)
            plies += game.ply
    return plies / (time.perf_counter() - start)


def push_pop_rate(spec: str, seconds: float) -> float:
    """Legal-move generation plus push/pop through the public API, as a search would use it."""
    variant = parse_variant(spec)
    game = Game(variant)
    for move in (4, 4, 3, 5):
        game.push(move)
    count = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(1000):
            for move in game.legal_moves():
                game.push(move)
                game.pop()
                count += 1
    return count / (time.perf_counter() - start)


def import_ms() -> float:
    code = "import time; t=time.perf_counter(); import arena.game; print((time.perf_counter()-t)*1000)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(5)]
    return sorted(runs)[len(runs) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per figure")
    args = parser.parse_args()
    for spec in ("classic", "popout", "five", "popout-five"):
        rate = playout_rate(spec, args.seconds)
        print(f"playout_{spec.replace('-', '_')}: {rate:,.0f} plies/s")
        if spec in GOALS:
            print(f"playout_{spec}_vs_goal: {rate / GOALS[spec]:.2f} x")
    for spec in ("classic", "popout"):
        print(f"push_pop_{spec}: {push_pop_rate(spec, args.seconds / 2):,.0f} moves/s")
    print(f"import_arena_game: {import_ms():.1f} ms")


if __name__ == "__main__":
    main()
