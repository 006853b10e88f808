"""Start-up time of the command line and of a bot, as ratios to a bare `python -c pass`.

Prints `name: value unit` lines: the median wall time of each command over interleaved rounds
(so that machine load hits every command alike) and its ratio to `python -c pass`. Goal (issue
13): `arena --help` and `arena replay 4455` <= 1.6x.

    python bench/startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 1.6

# The `arena` commands run through the installed `arena` script, as users run them (`python -m
# arena` would add runpy's imports); without an installed script, through `-m arena`.
_SCRIPT = Path(sys.executable).with_name("arena")
ARENA = [str(_SCRIPT)] if _SCRIPT.is_file() else ["-m", "arena"]

COMMANDS: dict[str, list[str]] = {
    "python_pass": ["-c", "pass"],
    "python_no_site": ["-S", "-c", "pass"],  # the floor: what the venv's site-packages add
    "arena_help": [*ARENA, "--help"],
    "arena_replay": [*ARENA, "replay", "4455"],
    "import_sdk": ["-c", "import arena.sdk"],
    # a whole bundled bot start to its end of input (its options parsed, the SDK's loop entered):
    # what every start costs under restart = "every-game"
    "bot_random": [str(ROOT / "bots" / "random" / "bot.py"), "--seed", "1"],
}


def time_once(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, cwd=ROOT, check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    options = parser.parse_args()
    # bytecode caches as an installed arena has them (a development shell may switch them off)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for args in COMMANDS.values():  # warm the file cache once
        time_once(args, env)
    for _ in range(options.rounds):
        for name, args in COMMANDS.items():
            samples[name].append(time_once(args, env))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["python_pass"]
    for name, value in medians.items():
        print(f"{name}: {value * 1000:.1f} ms")
    worst = 0.0
    for name, value in medians.items():
        if name != "python_pass":
            ratio = value / base
            print(f"{name}_vs_python: {ratio:.2f} ratio")
            if name in ("arena_help", "arena_replay"):
                worst = max(worst, ratio)
    print(f"startup_goal_met: {int(worst <= GOAL)} bool")
    return 0


if __name__ == "__main__":
    sys.exit(main())
