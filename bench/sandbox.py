"""What the bubblewrap sandbox costs a bot: start-up and per-move round trip, sandboxed against
unsandboxed, in one run (the bundled `random` bot, its real start-up through the SDK).

    python bench/sandbox.py [--starts N] [--plies N]

Prints `name: value unit` lines:
- start_to_hello_plain_median / start_to_hello_sandboxed_median: from spawning the bot to reading
  its `hello` answer (ms), alternating plain and sandboxed starts so that load hits both alike;
- start_to_hello_ratio (goal: <= 1.3, plus a few ms) and start_to_hello_extra (ms);
- start_to_hello_cgroup_median and cgroup_start_extra (ms): sandboxed starts with the bot's
  memory cgroup made, joined and removed (`arena.cgroup`; skipped where there is none);
- move_round_trip_plain_median / move_round_trip_sandboxed_median: writing a `turn` line to
  reading the `move` answer (us), the same positions for both;
- move_round_trip_ratio (goal: <= 1.1);
- games_per_second_kept_sandboxed_no_ponder and no_ponder_sandboxed_ratio: sandboxed games with
  each bot stopped between its turns (`ponder = false`), against the same games pondering;
- games_per_second_{kept,restart}_{plain,sandboxed} (median of alternating blocks) and their
  ratios (goal: >= 0.8): whole
  `random` vs `random` classic games through the referee, processes kept across games (as in a
  pairing of a tournament) or restarted for every game (start-up counted in every game).
Exits 1 (after a line saying why) if the sandbox is unavailable.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena import cgroup, protocol, sandbox  # noqa: E402
from arena.botspec import resolve_bot  # noqa: E402
from arena.game import Game, format_move, parse_move, parse_variant  # noqa: E402
from arena.process import minimal_env  # noqa: E402
from arena.referee import Player, TimeControl, play_game  # noqa: E402

ROUNDS = 5  # alternating blocks of games per mode


class Bot:
    """The `random` bot over bare pipes, started under `policy` (no referee in the way)."""

    def __init__(self, policy: sandbox.SandboxPolicy, in_cgroup: bool = False) -> None:
        spec = resolve_bot("random", ["--seed", "1"])
        self.home = tempfile.mkdtemp(prefix="bench-sandbox-")
        self.started = time.perf_counter()
        self.group = sandbox.memory_cgroup(policy) if in_cgroup else None
        argv, env = sandbox.wrap(spec.argv, minimal_env(self.home, uuid.uuid4().hex), spec.cwd,
                                 policy, self.group)
        self.proc = subprocess.Popen(argv, cwd=spec.cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0)
        self.buffer = b""

    def ask(self, line: str) -> str:
        os.write(self.proc.stdin.fileno(), (line + "\n").encode())
        return self.read()

    def read(self) -> str:
        while b"\n" not in self.buffer:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError("the bot exited")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def close(self) -> None:
        try:
            os.write(self.proc.stdin.fileno(), b"quit\n")
        except OSError:
            pass
        self.proc.stdin.close()
        self.proc.wait(10)
        self.proc.stdout.close()
        shutil.rmtree(self.home, ignore_errors=True)
        if self.group is not None:
            self.group.remove()


def start_to_hello(policy: sandbox.SandboxPolicy, in_cgroup: bool = False) -> float:
    """ms from making the bot's cgroup (if any) and spawning it to its `hello` answer."""
    bot = Bot(policy, in_cgroup)
    try:
        reply = bot.ask(protocol.hello_line())
        elapsed = time.perf_counter() - bot.started
        assert reply.startswith("hello"), reply
    finally:
        bot.close()
    return elapsed * 1000


def move_round_trips(policy: sandbox.SandboxPolicy, plies: int) -> list[float]:
    """Round trips of `plies` turns: whole classic games, the bot playing both sides."""
    variant = parse_variant("classic")
    bot = Bot(policy)
    times: list[float] = []
    try:
        bot.ask(protocol.hello_line())
        tc = {"move_ms": 1000, "startup_ms": 5000, "grace_ms": 200}
        os.write(bot.proc.stdin.fileno(),
                 (protocol.game_line("b1", 1, variant.describe(), tc) + "\n").encode())
        game = Game(variant)
        while len(times) < plies:
            if game.outcome is not None:
                game = Game(variant)
            line = protocol.turn_line([format_move(m) for m in game.moves], 1000, None)
            t = time.perf_counter()
            answer = bot.ask(line)
            times.append(time.perf_counter() - t)
            game.push(parse_move(answer.split()[1]))
    finally:
        bot.close()
    return times[20:]  # leave out the warm-up (first imports and caches)


def games_per_second(policy: sandbox.SandboxPolicy, games: int, restart: bool,
                     ponder: bool = True) -> float:
    """Games per second through the referee, every bot started under `policy` (ponder=False:
    each stopped between its turns, `ponder = false`)."""
    variant = parse_variant("classic")
    tc = TimeControl(move_ms=2000)
    before = sandbox.default_policy()
    sandbox.set_default_policy(policy)
    try:
        with Player(resolve_bot("random"), "r1", restart_every_game=restart, ponder=ponder) as a, \
                Player(resolve_bot("random"), "r2", restart_every_game=restart, ponder=ponder) as b:
            play_game(variant, a, b, tc)  # start the processes (kept) and warm up
            t = time.perf_counter()
            for i in range(games):
                play_game(variant, a, b, tc) if i % 2 == 0 else play_game(variant, b, a, tc)
            return games / (time.perf_counter() - t)
    finally:
        sandbox.set_default_policy(before)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=15, help="starts per mode")
    parser.add_argument("--plies", type=int, default=400, help="turns per mode")
    parser.add_argument("--games", type=int, default=10,
                        help="games per block (kept processes; a fifth of it restarted)")
    args = parser.parse_args()
    found = sandbox.probe()
    if not found.available:
        print(f"sandbox unavailable: {found.reason}")
        return 1
    plain, boxed = sandbox.SandboxPolicy("off"), sandbox.SandboxPolicy("on")
    starts: dict[str, list[float]] = {"plain": [], "sandboxed": [], "cgroup": []}
    start_to_hello(plain), start_to_hello(boxed)  # warm the page cache for both
    with_cgroup = cgroup.probe().available
    for _ in range(args.starts):
        starts["plain"].append(start_to_hello(plain))
        starts["sandboxed"].append(start_to_hello(boxed))
        if with_cgroup:
            starts["cgroup"].append(start_to_hello(boxed, in_cgroup=True))
    plain_ms = statistics.median(starts["plain"])
    boxed_ms = statistics.median(starts["sandboxed"])
    print(f"start_to_hello_plain_median: {plain_ms:.1f} ms")
    print(f"start_to_hello_sandboxed_median: {boxed_ms:.1f} ms")
    print(f"start_to_hello_ratio: {boxed_ms / plain_ms:.2f} x")
    print(f"start_to_hello_extra: {boxed_ms - plain_ms:.1f} ms")
    if with_cgroup:
        cgroup_ms = statistics.median(starts["cgroup"])
        print(f"start_to_hello_cgroup_median: {cgroup_ms:.1f} ms")
        print(f"cgroup_start_extra: {cgroup_ms - boxed_ms:.1f} ms")
    moves_plain = statistics.median(move_round_trips(plain, args.plies)) * 1e6
    moves_boxed = statistics.median(move_round_trips(boxed, args.plies)) * 1e6
    print(f"move_round_trip_plain_median: {moves_plain:.0f} us")
    print(f"move_round_trip_sandboxed_median: {moves_boxed:.0f} us")
    print(f"move_round_trip_ratio: {moves_boxed / moves_plain:.2f} x")
    # Blocks of games alternate between the modes so that the machine's load hits both alike.
    for restart, games in (("kept", args.games), ("restart", max(2, args.games // 5))):
        samples: dict[str, list[float]] = {"plain": [], "sandboxed": []}
        for _ in range(ROUNDS):
            for name, policy in (("plain", plain), ("sandboxed", boxed)):
                samples[name].append(games_per_second(policy, games, restart == "restart"))
        rates = {name: statistics.median(values) for name, values in samples.items()}
        for name, rate in rates.items():
            print(f"games_per_second_{restart}_{name}: {rate:.1f} games/s")
        print(f"games_per_second_{restart}_ratio: {rates['sandboxed'] / rates['plain']:.2f} x")
    # `ponder = false` sandboxed: the bots' cgroups frozen and thawed at every move (or their
    # process groups stopped, without a cgroup), against the same games pondering
    samples = {"ponder": [], "no_ponder": []}
    for _ in range(ROUNDS):
        samples["ponder"].append(games_per_second(boxed, args.games, False))
        samples["no_ponder"].append(games_per_second(boxed, args.games, False, ponder=False))
    rates = {name: statistics.median(values) for name, values in samples.items()}
    print(f"games_per_second_kept_sandboxed_no_ponder: {rates['no_ponder']:.1f} games/s")
    print(f"no_ponder_sandboxed_ratio: {rates['no_ponder'] / rates['ponder']:.2f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
