"""Helpers shared by the tests of the bundled search bots (alphabeta, mcts)."""

from __future__ import annotations

import time

from arena.game import Game, parse_variant

# Every preset, odd sizes, other line lengths and short ply caps.
SPECS = [
    "classic", "popout", "five", "popout-five",
    "classic:5x5", "popout:5x4", "classic:9x7", "five:7x5", "popout-five:11x7",
    "classic:8x5,connect=3", "popout:6x6,max-plies=30", "classic:4x4,max-plies=9",
]


def play_game(variant, players, move_s: float = 0.03) -> Game:
    """Play a whole game between two `choose(game, deadline)` players; every move must be legal."""
    game = Game(variant)
    while game.outcome is None:
        player = players[game.ply % 2]
        move = player.choose(game.copy(), time.monotonic() + move_s)
        assert game.is_legal(move), (variant.spec, game.moves, move)
        game.push(move)
    return game


def position(spec: str, moves: str) -> Game:
    """The position after `moves` (engine ints, space-separated) in variant `spec`."""
    game = Game(parse_variant(spec))
    for token in moves.split():
        game.push(int(token))
    return game
