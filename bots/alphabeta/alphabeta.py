#!/usr/bin/env python3
"""alphabeta: negamax with alpha-beta, exact solving in reach; `--level easy|medium|hard`."""

from __future__ import annotations

import gc
import threading

from player import DEFAULT_LEVEL, LEVELS, AlphaBetaPlayer

from arena.sdk import Option, parse_options, run_bot

VERSION = "1.0"


def load_compiled() -> None:
    """Import numba and the compiled search (the player uses it from its next move on)."""
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

    def choose_move(turn) -> int:
        player = players.get(turn.variant)
        if player is None:
            player = players[turn.variant] = AlphaBetaPlayer(turn.variant, options["level"], options["seed"])
        move = player.choose(turn.game, turn.deadline)
        if player.last_depth:  # recorded with the move: how deep, and which search
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
