"""The arena's overhead per move against a bare Python pipe ping-pong, and games per second.

    python bench/overhead.py [--quick]

Prints `name: value unit` lines:
- echo_round_trip_median: the floor, a Python child echoing one line (no work at all);
- bare_round_trip_median: a minimal Python bot (answers from the move list, no engine) driven
  over bare pipes with the same turn lines, no referee, measured in this run;
- arena_move_median: the arena's own measurement of a move (write turn -> read move), same bot;
- arena_per_move_median: wall time per ply of whole games through `play_game` (turn line,
  reading, parsing, engine, CPU accounting), the overhead the issue asks to keep within 2x;
- overhead_ratio: arena_per_move_median / bare_round_trip_median (goal: <= 2);
- arena_per_move_no_ponder_median and no_ponder_vs_ponder_ratio: the same games with each bot
  stopped between its turns (`ponder = false`: a SIGSTOP after each move, a SIGCONT before the
  next turn);
- games_per_second for `random` vs `random` in `classic`, with kept processes and restarted ones;
- the restart-every-game cost per game split into its two parts, in interleaved rounds with a
  bare start of the same bot (Popen, `hello`, read the answer; no arena):
  restart_start_ms (both bots of a game started and greeted, at once), restart_close_ms (what a
  restarted game waits for to close both: the quit lines; waiting for the exits, killing what is
  left and reaping run in the background), close_both_sync_ms (a close that waits for all of
  it), bare_start_to_hello_ms (one bot alone), bare_pair_start_to_hello_ms (two at once),
  arena_start_one_ms (one bot through the arena, alone), start_vs_bare_ratio (one bot) and
  restart_start_vs_bare_pair_ratio (goals: close <= 10 ms, start <= 1.2x).
- CPU affinity (issue 13), per move through `play_game` against the bare ping-pong of the raw
  bot, for the raw bot and for an SDK bot that plays the same moves, each with the referee and
  both bots unpinned and pinned to one core (as `affinity = true` does), all in interleaved
  rounds of one game each (the bare ping-pong pinned for the pinned ratios):
  per_move_{raw,sdk}_{unpinned,pinned}_ratio (goals: raw <= 3x, SDK <= 4x) and
  affinity_per_move_gain_{raw,sdk} (unpinned time per move / pinned; > 1: pinning helps).
    python bench/overhead.py --affinity-only [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena import affinity  # noqa: E402
from arena.botspec import resolve_bot  # noqa: E402
from arena.game import parse_variant  # noqa: E402
from arena.player import close_players, greet  # noqa: E402
from arena.referee import Player, TimeControl, play_game  # noqa: E402

ECHO = r"""
import sys
read, write, flush = sys.stdin.buffer.readline, sys.stdout.buffer.write, sys.stdout.buffer.flush
while True:
    line = read()
    if not line:
        break
    write(line)
    flush()
"""

# Answers every turn with the leftmost column that is not full, from the move list alone.
MINIMAL_BOT = r"""
import sys
read, write, flush = sys.stdin.buffer.readline, sys.stdout.buffer.write, sys.stdout.buffer.flush
columns = rows = 0
while True:
    line = read()
    if not line:
        break
    if line.startswith(b"turn"):
        moves = line.split(b" ")[2][6:]
        counts = [0] * (columns + 1)
        if moves != b"-":
            for token in moves.split(b","):
                counts[int(token[1:])] += 1 if token[:1] == b"d" else -1
        c = next(c for c in range(1, columns + 1) if counts[c] < rows)
        write(b"move d%d\n" % c)
        flush()
    elif line.startswith(b"game"):
        fields = dict(w.split(b"=", 1) for w in line.split()[1:])
        columns, rows = int(fields[b"columns"]), int(fields[b"rows"])
    elif line.startswith(b"hello"):
        write(b"hello name=minimal\n")
        flush()
    elif line.startswith(b"quit"):
        break
"""


# The same moves as MINIMAL_BOT (the leftmost column that is not full), through the SDK.
SDK_BOT = """
from arena.sdk import run_bot
run_bot(lambda turn: turn.game.legal_moves()[0], name="sdk-first")
"""


def echo_round_trip(n: int) -> float:
    """The floor: a Python child echoing one line over pipes."""
    child = subprocess.Popen([sys.executable, "-c", ECHO], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, bufsize=0)
    fd_in, fd_out = child.stdin.fileno(), child.stdout.fileno()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        os.write(fd_in, b"turn ply=2 moves=d4,d4 time_ms=1000\n")
        got = b""
        while not got.endswith(b"\n"):
            got += os.read(fd_out, 65536)
        times.append(time.perf_counter() - t)
    child.stdin.close()
    child.wait()
    return statistics.median(times) * 1e6


def bare_round_trip(games: int) -> float:
    """The same minimal bot driven over bare pipes with the same lines, no referee: one child
    answers every turn of a 12x12 game (144 plies) whose moves we append without any checks."""
    child = subprocess.Popen([sys.executable, "-c", MINIMAL_BOT], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, bufsize=0)
    fd_in, fd_out = child.stdin.fileno(), child.stdout.fileno()

    def ask(line: bytes) -> bytes:
        os.write(fd_in, line)
        got = b""
        while not got.endswith(b"\n"):
            got += os.read(fd_out, 65536)
        return got

    ask(b"hello protocol=fiar version=1\n")
    os.write(fd_in, b"game id=x seat=1 columns=12 rows=12 connect=12\n")
    times = []
    for _ in range(games + 1):
        moves: list[str] = []
        for _ply in range(144):
            line = (f"turn ply={len(moves)} moves={','.join(moves) or '-'} time_ms=2000 "
                    f"opponent_time_ms=- last_ms=-\n").encode()
            t = time.perf_counter()
            answer = ask(line)
            times.append(time.perf_counter() - t)
            moves.append(answer.split()[1].decode())
    child.stdin.close()
    child.wait()
    return statistics.median(times[144:]) * 1e6


def arena_moves(games: int, ponder: bool = True) -> tuple[float, float]:
    """(median move time in us, median whole-game time per move in us) of two minimal bots;
    ponder=False: each stopped between its turns (`Player.ponder`, two signals a move)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "minimal.py"
        path.write_text(MINIMAL_BOT)
        spec = resolve_bot(str(path))
        # a long game: 12x12 connect 12, the minimal bots fill columns left to right
        variant = parse_variant("classic:12x12,connect=12")
        tc = TimeControl(move_ms=2000)
        per_move, measured = [], []
        with Player(spec, "a", ponder=ponder) as a, Player(spec, "b", ponder=ponder) as b:
            play_game(variant, a, b, tc)  # warm up: start the processes
            for _ in range(games):
                t = time.perf_counter()
                rec = play_game(variant, a, b, tc)
                per_move.append((time.perf_counter() - t) / rec.plies)
                measured.extend(rec.move_ms)
    return statistics.median(measured) * 1e3, statistics.median(per_move) * 1e6


def games_per_second(games: int, restart: bool) -> float:
    variant = parse_variant("classic")
    tc = TimeControl(move_ms=2000)
    with Player(resolve_bot("random"), "r1", restart_every_game=restart) as a, Player(
        resolve_bot("random"), "r2", restart_every_game=restart
    ) as b:
        t = time.perf_counter()
        for i in range(games):
            play_game(variant, a, b, tc) if i % 2 == 0 else play_game(variant, b, a, tc)
        return games / (time.perf_counter() - t)


def bare_start_to_hello(argv: list[str], cwd: Path) -> float:
    """One bot started with plain pipes until its answer to hello, in ms (no arena)."""
    t = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             bufsize=0)
    child.stdin.write(b"hello protocol=fiar version=1\n")
    child.stdout.readline()
    elapsed = (time.perf_counter() - t) * 1000
    child.stdin.close()
    child.wait()
    child.stdout.close()
    return elapsed


def bare_pair_start_to_hello(argv: list[str], cwd: Path) -> float:
    """Two copies of a bot started at once with plain pipes until both answered hello, in ms."""
    t = time.perf_counter()
    children = [subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 bufsize=0) for _ in range(2)]
    for child in children:
        child.stdin.write(b"hello protocol=fiar version=1\n")
    for child in children:
        child.stdout.readline()
    elapsed = (time.perf_counter() - t) * 1000
    for child in children:
        child.stdin.close()
        child.wait()
        child.stdout.close()
    return elapsed


def restart_costs(rounds: int) -> dict[str, float]:
    """Medians over interleaved rounds of the parts of a restarted game.

    Each round: a bare start of one bot and of two at once; one bot through the arena; then a
    restart-every-game sequence (start both bots, play, retire both: quit sent, the rest of the
    close in the background while the next game starts) and a synchronous close of both (quit,
    exit, nothing left, reaped), each timed on its own.
    """
    spec = resolve_bot("random")
    variant = parse_variant("classic")
    tc = TimeControl(move_ms=2000)
    series: dict[str, list[float]] = {key: [] for key in (
        "bare_start_to_hello_ms", "bare_pair_start_to_hello_ms", "arena_start_one_ms",
        "restart_start_ms", "restart_close_ms", "close_both_sync_ms")}

    def timed(key: str, action) -> None:
        t = time.perf_counter()
        action()
        series[key].append((time.perf_counter() - t) * 1000)

    def started(*players: Player) -> None:
        assert not greet(dict(enumerate(players, 1)), tc)

    with Player(spec, "a") as a, Player(spec, "b") as b:
        for _ in range(rounds):
            series["bare_start_to_hello_ms"].append(bare_start_to_hello(spec.argv, spec.cwd))
            series["bare_pair_start_to_hello_ms"].append(
                bare_pair_start_to_hello(spec.argv, spec.cwd))
            with Player(spec, "solo") as solo:
                timed("arena_start_one_ms", lambda solo=solo: started(solo))
            timed("restart_start_ms", lambda: started(a, b))
            play_game(variant, a, b, tc)
            timed("restart_close_ms", lambda: close_players([a, b], wait=False))
            started(a, b)
            play_game(variant, a, b, tc)
            timed("close_both_sync_ms", lambda: close_players([a, b]))
    return {key: statistics.median(values) for key, values in series.items()}


class BarePingPong:
    """The raw bot over bare pipes, kept running: `game()` times each ply of one 12x12 game."""

    def __init__(self) -> None:
        self.child = subprocess.Popen([sys.executable, "-c", MINIMAL_BOT],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.fd_in, self.fd_out = self.child.stdin.fileno(), self.child.stdout.fileno()
        self.ask(b"hello protocol=fiar version=1\n")
        os.write(self.fd_in, b"game id=x seat=1 columns=12 rows=12 connect=12\n")

    def ask(self, line: bytes) -> bytes:
        os.write(self.fd_in, line)
        got = b""
        while not got.endswith(b"\n"):
            got += os.read(self.fd_out, 65536)
        return got

    def game(self) -> list[float]:
        moves: list[str] = []
        times = []
        for _ply in range(144):
            line = (f"turn ply={len(moves)} moves={','.join(moves) or '-'} time_ms=2000 "
                    f"opponent_time_ms=- last_ms=-\n").encode()
            t = time.perf_counter()
            answer = self.ask(line)
            times.append(time.perf_counter() - t)
            moves.append(answer.split()[1].decode())
        return times

    def close(self) -> None:
        self.child.stdin.close()
        self.child.wait()
        self.child.stdout.close()


def affinity_ratios(rounds: int) -> dict[str, float]:
    """Per-move ratios of the arena to the bare ping-pong, raw and SDK bots, unpinned and
    pinned (referee and bots on one core, as `affinity = true`), from interleaved rounds.

    Pinning is inherited at start: the pinned bots and bare child are started, and every pinned
    game played, inside `affinity.pinned`, which pins this (the referee's) thread."""
    cores = affinity.allowed_cpus()
    if not cores:
        print(affinity.UNAVAILABLE_NOTE, file=sys.stderr)
        return {}
    core = {cores[-1]}  # the last CPU: the first is the most likely to serve interrupts
    variant = parse_variant("classic:12x12,connect=12")
    tc = TimeControl(move_ms=2000)
    kinds = ("raw", "sdk")
    pins = ("unpinned", "pinned")
    per_move: dict[tuple[str, str], list[float]] = {(k, p): [] for k in kinds for p in pins}
    bare: dict[str, list[float]] = {p: [] for p in pins}

    def pinning(pin: str):
        return affinity.pinned(core) if pin == "pinned" else contextlib.nullcontext()

    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        specs = {}
        for kind, code in (("raw", MINIMAL_BOT), ("sdk", SDK_BOT)):
            (Path(tmp) / f"{kind}.py").write_text(code)
            specs[kind] = resolve_bot(str(Path(tmp) / f"{kind}.py"))
        players, children = {}, {}
        for pin in pins:
            with pinning(pin):
                children[pin] = BarePingPong()
                stack.callback(children[pin].close)
                for kind in kinds:
                    pair = (stack.enter_context(Player(specs[kind], f"{kind}-a")),
                            stack.enter_context(Player(specs[kind], f"{kind}-b")))
                    play_game(variant, *pair, tc)  # started here, so pinned from birth
                    players[kind, pin] = pair
        for r in range(rounds):
            for pin in pins if r % 2 == 0 else pins[::-1]:  # neither always goes first
                with pinning(pin):
                    bare[pin].extend(children[pin].game())
                    for kind in kinds:
                        t = time.perf_counter()
                        record = play_game(variant, *players[kind, pin], tc)
                        per_move[kind, pin].append((time.perf_counter() - t) / record.plies)
    out: dict[str, float] = {}
    for kind in kinds:
        for pin in pins:
            ratio = statistics.median(per_move[kind, pin]) / statistics.median(bare[pin])
            out[f"per_move_{kind}_{pin}_ratio"] = ratio
        out[f"affinity_per_move_gain_{kind}"] = (statistics.median(per_move[kind, "unpinned"])
                                                 / statistics.median(per_move[kind, "pinned"]))
    for pin in pins:
        out[f"bare_round_trip_{pin}_us"] = statistics.median(bare[pin]) * 1e6
    return out


def print_affinity_ratios(rounds: int) -> None:
    # pinned work cannot move off a core that other work is using: the gain depends on the load
    print(f"load_average_before_affinity: {os.getloadavg()[0]:.2f} processes")
    for name, value in affinity_ratios(rounds).items():
        unit = "us" if name.endswith("_us") else "x"
        print(f"{name.removesuffix('_us')}: {value:.2f} {unit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--restart-only", action="store_true",
                        help="only the restart-every-game cost (start and close)")
    parser.add_argument("--affinity-only", action="store_true",
                        help="only the per-move ratios pinned and unpinned (SDK and raw bots)")
    args = parser.parse_args()
    if args.affinity_only:
        print_affinity_ratios(10 if args.quick else 40)
        return
    costs = restart_costs(8 if args.quick else 20)
    for name, value in costs.items():
        print(f"{name}: {value:.1f} ms")
    one = costs["arena_start_one_ms"] / costs["bare_start_to_hello_ms"]
    pair = costs["restart_start_ms"] / costs["bare_pair_start_to_hello_ms"]
    print(f"start_vs_bare_ratio: {one:.2f} x")
    print(f"restart_start_vs_bare_pair_ratio: {pair:.2f} x")
    if args.restart_only:
        return
    scale = 1 if args.quick else 4
    bare = bare_round_trip(5 * scale)
    arena_move, arena_per_move = arena_moves(5 * scale)
    print(f"echo_round_trip_median: {echo_round_trip(2000 * scale):.1f} us")
    print(f"bare_round_trip_median: {bare:.1f} us")
    print(f"arena_move_median: {arena_move:.1f} us")
    print(f"arena_per_move_median: {arena_per_move:.1f} us")
    print(f"overhead_ratio: {arena_per_move / bare:.2f} x")
    _, frozen_per_move = arena_moves(5 * scale, ponder=False)
    print(f"arena_per_move_no_ponder_median: {frozen_per_move:.1f} us")
    print(f"no_ponder_vs_ponder_ratio: {frozen_per_move / arena_per_move:.2f} x")
    print(f"games_per_second_kept: {games_per_second(25 * scale, False):.1f} games/s")
    print(f"games_per_second_restart: {games_per_second(5 * scale, True):.1f} games/s")
    print_affinity_ratios(10 if args.quick else 40)


if __name__ == "__main__":
    main()
