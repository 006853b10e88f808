#!/usr/bin/env python3
"""alphabeta: negamax with alpha-beta, exact solving in reach; `--level easy|medium|hard`."""

from __future__ import annotations

import gc
import sys
import threading

from player import DEFAULT_LEVEL, LEVELS, AlphaBetaPlayer, load_book

from arena.sdk import Option, parse_options, run_bot

VERSION = "1.0"


BOOK_READY = threading.Event()  # set once the loader thread is done with the book
BOOK_WAIT_SHARE = 0.4  # of the start-up allowance, at most spent waiting for the book


def load_compiled() -> None:
    """Load the opening book, then import numba and the compiled search (the player uses each
    from its next move on)."""
    try:
        load_book()
    except Exception as error:  # a damaged book file: play on without it, and say so
        print(f"alphabeta: no opening book ({error})", file=sys.stderr, flush=True)
    finally:
        BOOK_READY.set()
    import compiled

    compiled.warm_up()


def main(argv: list[str] | None = None) -> None:
    options = parse_options({"level": Option(str, DEFAULT_LEVEL, sorted(LEVELS), "strength"),
                             "seed": Option(int, help="seed of the tie-breaks")},
                            argv, prog="alphabeta", description=__doc__)
    # the search makes no reference cycles: no collector pauses in the middle of a move
    gc.disable()
    # loading (or, the first time, compiling) the compiled search takes 0.2-4 s: the Python
    # search plays the moves until it is ready
    threading.Thread(target=load_compiled, name="compile", daemon=True).start()
    players: dict = {}
    first_move = True  # of this process

    def choose_move(turn) -> int:
        nonlocal first_move
        if first_move:
            first_move = False
            # the first move of a process has the start-up allowance on top of its time
            # (PROTOCOL.md): a little of it lets the book arrive (0.1-0.2 s; a search running
            # beside the loader would starve it of the GIL for a second or more)
            BOOK_READY.wait(BOOK_WAIT_SHARE * turn.setup.startup_ms / 1000)
        player = players.get(turn.variant)
        if player is None:
            player = players[turn.variant] = AlphaBetaPlayer(turn.variant, options["level"], options["seed"])
        move = player.choose(turn.game, turn.deadline)
        if player.book_score is not None:
            turn.info(f"book score {player.book_score}")
        elif player.last_depth:  # recorded with the move: how deep, and which search
            search = "compiled" if player.fast is not None else "python"
            turn.info(f"depth {player.last_depth} score {player.last_score} search {search}")
        return move

    def on_new_game(*_args, **_kwargs) -> None:
        for player in players.values():
            player.new_game()
        gc.collect()  # between games, outside any move's time

    name = "alphabeta" if options["level"] == DEFAULT_LEVEL else f"alphabeta-{options['level']}"
    run_bot(choose_move, name=name, version=VERSION, author="arena", on_new_game=on_new_game)


if __name__ == "__main__":
    main()
