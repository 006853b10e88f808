#!/usr/bin/env python3
"""alphabeta: negamax with alpha-beta, exact solving in reach; `--level easy|medium|hard`."""

from __future__ import annotations

import gc
import sys
import threading
import time

from compiled_loader import first_move_deadline, first_move_wait_left
from player import DEFAULT_LEVEL, LEVELS, AlphaBetaPlayer, load_book

from arena.recent import RecentlyUsed
from arena.sdk import Option, parse_options, run_bot

VERSION = "1.0"
# players kept, the most recently played variants' (about 17 MB of search tables each)
MAX_PLAYERS = 4


# set once the loader thread has loaded the book and imported numba, then once it has loaded the
# compiled search too: that holds the GIL for 0.2 s and more, and a search beside it overran a
# 100 ms move by over 200 ms (a demo forfeit: seven instant book moves, then the first search met
# the load), so the first move waits for both, within a share of the start-up allowance
HEAVY_LOADED = threading.Event()
SEARCH_READY = threading.Event()


def load_compiled() -> None:
    """Load the opening book, numba and the compiled search (the player uses each from its next
    move on), in an order that keeps the moves on time: numba's import holds the GIL for up to
    0.2 s (it maps LLVM), so it comes first, while the first move waits; then
    `compiled_loader.load_compiled_search`."""
    try:
        try:
            try:
                load_book()
            except Exception as error:  # a damaged book file: play on without it, and say so
                print(f"alphabeta: no opening book ({error})", file=sys.stderr, flush=True)
            try:
                import numba  # noqa: F401
            except ImportError:  # the Python search plays every move
                return
            gc.freeze()  # numba's objects: see compiled_loader
        finally:
            HEAVY_LOADED.set()
        from compiled_loader import load_compiled_search

        load_compiled_search()
    finally:
        SEARCH_READY.set()


def main(argv: list[str] | None = None) -> None:
    options = parse_options({"level": Option(str, DEFAULT_LEVEL, sorted(LEVELS), "strength"),
                             "seed": Option(int, help="seed of the tie-breaks")},
                            argv, prog="alphabeta", description=__doc__)
    # the search makes no reference cycles: no collector pauses in the middle of a move
    gc.disable()
    # loading the compiled search takes 0.2-0.6 s, compiling it (where never done) 4 s and more:
    # the Python search plays the moves until it is ready
    threading.Thread(target=load_compiled, name="compile", daemon=True).start()
    players = RecentlyUsed(
        lambda variant: AlphaBetaPlayer(variant, options["level"], options["seed"]), MAX_PLAYERS)
    first_move = True  # of this process

    def choose_move(turn) -> int:
        nonlocal first_move
        deadline = turn.deadline
        if first_move:
            first_move = False
            # the first move of a process has the start-up allowance on top of its time
            # (PROTOCOL.md): a little of it lets the book, numba and the compiled search arrive
            # (0.2-0.8 s; beside a search the loader would get the GIL only now and then, for a
            # second or more, or hold it past a move's time); the move keeps its own time after
            waited = time.monotonic()
            HEAVY_LOADED.wait(first_move_wait_left(turn, waited))
            SEARCH_READY.wait(first_move_wait_left(turn, waited))
            deadline = first_move_deadline(turn, waited)
        move = (player := players.get(turn.variant)).choose(turn.game, deadline)
        if player.book_score is not None:
            turn.info(f"book score {player.book_score}")
        elif player.last_depth:  # recorded with the move: how deep, and which search
            search = "compiled" if player.fast is not None else "python"
            turn.info(f"depth {player.last_depth} score {player.last_score} search {search}")
        return move

    def on_new_game(setup) -> None:
        players.get(setup.variant)  # its tables made here, not in its first move
        for player in players:
            player.new_game()
        gc.collect()  # between games (numba's objects frozen: a few ms)

    name = "alphabeta" if options["level"] == DEFAULT_LEVEL else f"alphabeta-{options['level']}"
    run_bot(choose_move, name=name, version=VERSION, author="arena", on_new_game=on_new_game)


if __name__ == "__main__":
    main()
