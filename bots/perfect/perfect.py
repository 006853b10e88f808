#!/usr/bin/env python3
"""perfect: game-theoretically optimal play where the exact solver reaches (classic 7x6 and other
drop-only four-in-a-row boards of at most 63 bits), alphabeta's search elsewhere."""

from __future__ import annotations

import gc
import threading

from perfect_player import PerfectPlayer

from arena.sdk import run_bot
from arena.solver import engine, kernel

VERSION = "1.0"
# the hello can only name the bot: its version says where the play is exact (nowhere without
# numba: the solver would be too slow to play in time, so it only searches)
HELLO_VERSION = f"{VERSION}+exact-drop-only-connect4" if kernel.COMPILED else f"{VERSION}+search-only-no-numba"


def warm_up(solver_ready: threading.Event) -> None:
    """Load (or compile, the first time) the solver's machine code, say so, then the compiled
    search of the fallback (bots/alphabeta), which the moves use once it is there."""
    if kernel.COMPILED:
        engine.warm_up()
    gc.freeze()  # numba's objects out of the collector's sight (see compiled_loader)
    solver_ready.set()
    if kernel.COMPILED:
        from compiled_loader import load_compiled_search  # bots/alphabeta's (on the path now)

        load_compiled_search()


def main() -> None:
    gc.disable()  # no collector pauses in the middle of a move
    # compiling (first run) or loading the solver's machine code takes 0.2-2 s: do it while the
    # handshake is answered, and wait for it in the first move (which has the start-up
    # allowance); the fallback's compiled search (0.2-4 s) is not waited for
    solver_ready = threading.Event()
    threading.Thread(target=warm_up, args=(solver_ready,), daemon=True).start()
    players: dict = {}

    def choose_move(turn) -> int:
        solver_ready.wait()
        player = players.get(turn.variant)
        if player is None:
            player = players[turn.variant] = PerfectPlayer(turn.variant)
        move = player.choose(turn.game, turn.deadline)
        turn.info(player.last)
        return move

    def on_new_game(*_args, **_kwargs) -> None:
        for player in players.values():
            player.new_game()
        gc.collect()

    run_bot(choose_move, name="perfect", version=HELLO_VERSION, author="arena",
            on_new_game=on_new_game)


if __name__ == "__main__":
    main()
