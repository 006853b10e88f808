#!/usr/bin/env python3
"""perfect: game-theoretically optimal play where the exact solver reaches (classic 7x6 and other
drop-only four-in-a-row boards of at most 63 bits), alphabeta's search elsewhere."""

from __future__ import annotations

import gc
import threading
import time

from perfect_player import PerfectPlayer  # puts bots/alphabeta on the path

from arena.recent import RecentlyUsed
from arena.sdk import run_bot
from arena.solver import engine, kernel

VERSION = "1.0"
# the hello can only name the bot: its version says where the play is exact (nowhere without
# numba: the solver would be too slow to play in time, so it only searches)
HELLO_VERSION = f"{VERSION}+exact-drop-only-connect4" if kernel.COMPILED else f"{VERSION}+search-only-no-numba"


# set once the solver's machine code is loaded (every move waits for it), then once the
# fallback's compiled search is too: loading it holds the GIL for 0.2 s and more, and a search
# beside it overran a 50 ms move by 215 ms, so the first move waits for it as well (up to a
# share of the start-up allowance: compiled_loader)
SOLVER_READY = threading.Event()
SEARCH_READY = threading.Event()
# players kept, the most recently played variants': each holds 64 MiB of solver table and the
# fallback's tables, and ten board sizes in one process ran out of the sandbox's 1 GiB
MAX_PLAYERS = 3


class Players(RecentlyUsed):
    """The perfect players of the most recently played variants, at most `limit` of them."""

    def __init__(self, limit: int = MAX_PLAYERS) -> None:
        super().__init__(PerfectPlayer, limit)


def warm_up() -> None:
    """Load (or compile, the first time) the solver's machine code, then the compiled search of
    the fallback (bots/alphabeta), which the moves use once it is there."""
    try:
        if kernel.COMPILED:
            engine.warm_up()
        gc.freeze()  # numba's objects out of the collector's sight (see compiled_loader)
    finally:
        SOLVER_READY.set()
    try:
        if kernel.COMPILED:
            from compiled_loader import load_compiled_search  # bots/alphabeta's (on the path now)

            load_compiled_search()
    finally:
        SEARCH_READY.set()


def main() -> None:
    # bots/alphabeta's, on the path once perfect_player is imported
    from compiled_loader import first_move_deadline, first_move_wait_left

    gc.disable()  # no collector pauses in the middle of a move
    # compiling (first run) or loading the solver's machine code takes 0.2-2 s, the fallback's
    # compiled search 0.2-4 s: both load while the handshake is answered, and the first move
    # (which has the start-up allowance) waits for them
    threading.Thread(target=warm_up, name="warm-up", daemon=True).start()
    players = Players()
    first_move = True  # of this process

    def choose_move(turn) -> int:
        nonlocal first_move
        deadline = turn.deadline
        if first_move:
            first_move = False
            waited = time.monotonic()
            SOLVER_READY.wait()
            SEARCH_READY.wait(first_move_wait_left(turn, waited))
            deadline = first_move_deadline(turn, waited)
        else:
            SOLVER_READY.wait()
        move = (player := players.get(turn.variant)).choose(turn.game, deadline)
        turn.info(player.last)
        return move

    def on_new_game(setup) -> None:
        # the game's player and its tables made here, outside a move (the SDK counts a first
        # turn that waited for this from when it began); the first game's wait for the loader
        # thread is the first move's
        if SOLVER_READY.is_set():
            players.get(setup.variant).new_game()
        gc.collect()

    run_bot(choose_move, name="perfect", version=HELLO_VERSION, author="arena",
            on_new_game=on_new_game)


if __name__ == "__main__":
    main()
