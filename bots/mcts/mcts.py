#!/usr/bin/env python3
"""mcts: Monte Carlo tree search (UCT) with tactical playouts; `--level easy|medium|hard`."""

from __future__ import annotations

import gc

from tree import DEFAULT_LEVEL, LEVELS, MctsPlayer

from arena.sdk import Option, parse_options, run_bot

VERSION = "1.0"


def main(argv: list[str] | None = None) -> None:
    options = parse_options({"level": Option(str, DEFAULT_LEVEL, sorted(LEVELS), "strength"),
                             "seed": Option(int, help="seed of the tie-breaks")},
                            argv, prog="mcts", description=__doc__)
    # the search makes no reference cycles: no collector pauses in the middle of a move
    gc.disable()
    players: dict = {}

    def choose_move(turn) -> int:
        player = players.get(turn.variant)
        if player is None:
            player = players[turn.variant] = MctsPlayer(turn.variant, options["level"], options["seed"])
        return player.choose(turn.game, turn.deadline)

    def on_new_game(*_args, **_kwargs) -> None:
        gc.collect()  # between games, outside any move's time

    name = "mcts" if options["level"] == DEFAULT_LEVEL else f"mcts-{options['level']}"
    run_bot(choose_move, name=name, version=VERSION, author="arena", on_new_game=on_new_game)


if __name__ == "__main__":
    main()
