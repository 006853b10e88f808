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
- games_per_second for `random` vs `random` in `classic`, with kept processes and restarted ones;
- the restart-every-game cost per game split into its two parts, in interleaved rounds with a
  bare start of the same bot (Popen, `hello`, read the answer; no arena):
  restart_start_ms (both bots of a game started and greeted, at once), restart_close_ms (what a
  restarted game waits for to close both: the quit lines; waiting for the exits, killing what is
  left and reaping run in the background), close_both_sync_ms (a close that waits for all of
  it), bare_start_to_hello_ms (one bot alone), bare_pair_start_to_hello_ms (two at once),
  arena_start_one_ms (one bot through the arena, alone), start_vs_bare_ratio (one bot) and
  restart_start_vs_bare_pair_ratio (goals: close <= 10 ms, start <= 1.2x).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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


def arena_moves(games: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "minimal.py"
        path.write_text(MINIMAL_BOT)
        spec = resolve_bot(str(path))
        # a long game: 12x12 connect 12, the minimal bots fill columns left to right
        variant = parse_variant("classic:12x12,connect=12")
        tc = TimeControl(move_ms=2000)
        per_move, measured = [], []
        with Player(spec, "a") as a, Player(spec, "b") as b:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--restart-only", action="store_true",
                        help="only the restart-every-game cost (start and close)")
    args = parser.parse_args()
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
    print(f"games_per_second_kept: {games_per_second(25 * scale, False):.1f} games/s")
    print(f"games_per_second_restart: {games_per_second(5 * scale, True):.1f} games/s")


if __name__ == "__main__":
    main()
