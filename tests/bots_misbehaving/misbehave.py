"""A bot that misbehaves in the way named by its first argument (for the referee's tests).

Modes that play at all play the first legal move until the misbehaviour is due. `--after N`
delays the misbehaviour until the bot's N-th move (default 0: at once). `--pidfile PATH` is where
`grandchild` writes the pid of the process it leaves behind. `--think-ms N` is how long `slow`
sleeps before each move (default 200).
"""

import argparse
import os
import signal
import sys
import time

from arena.game import Game, format_move, parse_move
from arena.protocol import parse_game_line, parse_turn_line
from arena.sdk import variant_from_setup

p = argparse.ArgumentParser()
p.add_argument("mode")
p.add_argument("--after", type=int, default=0)
p.add_argument("--pidfile", default="")
p.add_argument("--think-ms", type=int, default=200)
args = p.parse_args()
mode = args.mode
out = sys.stdout


def say(text):
    out.write(text + "\n")
    out.flush()


def leave_grandchild():
    child = os.fork()
    if child == 0:
        if os.fork() == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            with open(args.pidfile + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(args.pidfile + ".tmp", args.pidfile)
            while True:
                time.sleep(1000)
        os._exit(0)
    os.waitpid(child, 0)


if mode == "crash_start":
    sys.exit(3)
if mode == "ignore_term_start":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(1000)
if mode in ("ignore_term",):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode == "grandchild":
    leave_grandchild()

variant = None
game_id = "-"
my_moves = 0
last_move_cpu = None  # offturn: this process's CPU time when its last move went out
first_turn = False  # offturn: no move since its hello answer


def spin() -> None:
    while True:
        pass


def chain(counter) -> None:
    """A chain of processes, each computing 2 ms, adding it to `counter` (shared memory, in
    microseconds), then forking its successor and leaving: always one step ahead of an arena
    that stops the processes it finds one by one."""
    while True:
        start = time.process_time()
        while time.process_time() - start < 0.002:
            pass
        with counter_lock:
            counter[0] += int((time.process_time() - start) * 1e6)
        if os.fork():
            os._exit(0)


if mode == "offturn":  # computes all the time, on its own turns and its opponent's
    import threading

    threading.Thread(target=spin, daemon=True).start()
if mode == "offturn_chain":  # the same through chains of short-lived processes
    import multiprocessing

    counter_lock = multiprocessing.Lock()
    shared = multiprocessing.RawArray("q", 1)
    for _ in range(2):
        if os.fork() == 0:
            chain(shared)
for raw in sys.stdin:
    line = raw.strip()
    word = line.split(" ", 1)[0]
    if mode == "strict" and word not in ("hello", "game", "turn", "end", "quit"):
        sys.stderr.write(f"unknown word {word}\n")  # a bot that fails to ignore a new line
        sys.exit(4)
    if word == "hello":
        if mode == "silent_start":
            while True:
                time.sleep(1000)
        if mode == "bad_hello":
            say("I am a bot")
            continue
        say(f"hello name=misbehave-{mode} version=0")
        if mode in ("offturn", "offturn_chain"):  # from here to its first turn: waiting
            first_turn = True
            last_move_cpu = time.process_time() if mode == "offturn" else shared[0] / 1e6
    elif word == "game":
        setup = parse_game_line(line)
        variant, game_id = variant_from_setup(setup), setup["id"]
    elif word == "turn":
        turn = parse_turn_line(line)
        game = Game(variant)
        for token in turn["moves"]:
            game.push(parse_move(token))
        move = format_move(game.legal_moves()[0])
        if mode in ("offturn", "offturn_chain"):  # its CPU since its last move: while the opponent moved
            used = time.process_time() if mode == "offturn" else shared[0] / 1e6
            if last_move_cpu is not None:
                since = " first" if first_turn else ""  # since its hello answer
                sys.stderr.write(f"offturn_cpu_ms {(used - last_move_cpu) * 1000:.1f}{since}\n")
                sys.stderr.flush()
            first_turn = False
            say("move " + move)
            last_move_cpu = time.process_time() if mode == "offturn" else shared[0] / 1e6
            continue
        if mode == "slow":  # thinks a while each move without using the CPU
            time.sleep(args.think_ms / 1000)
            say("move " + move)
            continue
        due = my_moves >= args.after
        my_moves += 1
        if not due or mode in ("grandchild", "flood_stderr_ok", "info", "stderr_moves"):
            if mode == "stderr_moves":  # the game's own lines, the last one right before a move
                sys.stderr.write(f"{game_id} ply {len(turn['moves'])}\n")
                sys.stderr.flush()
            if mode == "flood_stderr_ok":
                sys.stderr.write("e" * 100_000 + "\n")
                sys.stderr.flush()
            if mode == "info":
                say("info depth 1 score 0")
                say("info " + "x" * 10_000)
            say("move " + move)
            continue
        if mode == "crash_mid":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif mode == "exit_early":
            sys.exit(0)
        elif mode == "exit_said":
            sys.stderr.write("debug: thinking\nran out of ideas\n")
            sys.stderr.flush()
            sys.exit(2)
        elif mode == "illegal":
            say("move d99")
        elif mode == "wrong_game":
            say("move d1")  # column 1 is full and fixed in `five`
        elif mode == "malformed":
            say("move x4")
        elif mode == "garbage":
            say("\x00\x01 garbage")
        elif mode == "unknown_line":
            say("thinking very hard")
        elif mode in ("never", "ignore_term"):
            while True:
                time.sleep(1000)
        elif mode == "late":
            time.sleep(turn["time_ms"] / 1000 + 1.5)
            say("move " + move)
        elif mode == "no_newline":  # flushes its move but never ends the line
            out.write("move " + move)
            out.flush()
            while True:
                time.sleep(1000)
        elif mode == "trickle":
            while True:
                out.write("i")
                out.flush()
                time.sleep(0.02)
        elif mode == "flood_stdout":
            chunk = "x" * 65536
            while True:
                out.write(chunk)
                out.flush()
        elif mode == "flood_info":
            while True:
                out.write("info flood\n" * 1000)
                out.flush()
        elif mode == "flood_stderr":
            while True:
                sys.stderr.write("e" * 65536)
                sys.stderr.flush()
        elif mode == "close_stdout":  # closes its output but keeps running
            os.close(1)
            while True:
                time.sleep(1000)
        elif mode == "close_stdin":  # closes its input, answers, keeps running
            os.close(0)
            say("move " + move)
            while True:
                time.sleep(1000)
        elif mode == "two_moves":
            say("move " + move)
            say("move d99")  # a second answer to the same turn
        else:
            say("move " + move)
    elif word == "end" and mode == "exit_after_end":  # one process per game, as on Kaggle
        time.sleep(0.3)  # past the next game's start: its first turn finds it gone
        sys.exit(0)
    elif word == "quit":
        break
