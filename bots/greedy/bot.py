"""greedy: win now; else block the opponent's immediate win; else avoid a move that lets the
opponent win next; else prefer the centre. Works for every variant (drops and pops)."""

import random

from arena.sdk import Option, parse_options, reseed, run_bot


def wins_now(game, move, me):
    outcome = game.push(move)
    game.pop()
    return outcome is not None and outcome.winner == me


def opponent_can_win(game, opponent):
    """True if the player to move (the opponent) has a move that wins at once."""
    for reply in game.legal_moves():
        outcome = game.push(reply)
        game.pop()
        if outcome is not None and outcome.winner == opponent:
            return True
    return False


def choose_greedy(game, rng):
    me = game.to_move
    opponent = 3 - me
    moves = game.legal_moves()
    for move in moves:
        if wins_now(game, move, me):
            return move
    safe = []
    for move in moves:
        outcome = game.push(move)
        ok = outcome is not None and outcome.winner != opponent or (
            outcome is None and not opponent_can_win(game, opponent)
        )
        game.pop()
        if ok:
            safe.append(move)
    pool = safe or moves
    centre = (game.variant.columns + 1) / 2
    # drops before pops, then closest to the centre, ties broken at random
    best = min((move < 0, abs(abs(move) - centre)) for move in pool)
    return rng.choice([m for m in pool if (m < 0, abs(abs(m) - centre)) == best])


def main() -> None:
    options = parse_options({"seed": Option(int, help="seed of the tie-breaks")}, description=__doc__)
    rng = random.Random(options["seed"])
    run_bot(lambda turn: choose_greedy(turn.game, rng), name="greedy", version="1.0",
            author="arena", on_new_game=lambda setup: reseed(rng, setup, options["seed"]))


if __name__ == "__main__":
    main()
